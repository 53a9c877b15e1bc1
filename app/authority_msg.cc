#include "app/authority_msg.h"

#include "crypto/bech32.h"

namespace kairos::app {

namespace {

constexpr FieldSpec kMsgUpdateParamsFields[] = {
    {1, "authority", ProtoKind::kString},
    {2, "params", ProtoKind::kMessage},
};
constexpr MessageSpec kMsgUpdateParamsSpec{"MsgUpdateParams", kMsgUpdateParamsFields};

}  // namespace

bool DecodeUpdateParams(
    ProtoReader& reader, std::string_view data, const ProtoPath& path,
    std::string* authority_text, std::string* authority,
    const std::function<bool(std::string_view params, const ProtoPath& at)>& decode_params) {
  std::string_view text;
  bool ok = reader.Walk(data, kMsgUpdateParamsSpec, path,
                        [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
                          if (f.number == 1) {
                            text = b;
                            return true;
                          }
                          return decode_params(b, ProtoPath{&path, "params"});
                        });
  if (!ok) return false;
  *authority_text = std::string(text);
  return reader.DecodeAddress(text, path, "authority", authority);
}

ante::TxStatus BeginAuthorityMsg(ante::Context& ctx, const AuthorityKeeper* keeper,
                                 std::string_view authority, std::string_view type_url,
                                 std::string_view module, std::size_t msg_index) {
  if (ante::TxStatus s = CheckAuthority(keeper, *ctx.store, authority); !s.ok()) return s;
  ctx.Emit("message", {{"action", std::string(type_url)},
                       {"sender", crypto::EncodeAccountAddress(authority)},
                       {"module", std::string(module)},
                       {"msg_index", std::to_string(msg_index)}});
  return ante::TxStatus::OK();
}

}  // namespace kairos::app
