#include "app/auth/msgs.h"

#include <iterator>
#include <utility>

#include "app/authority_msg.h"
#include "app/proto_util.h"
#include "cosmos/auth/v1beta1/tx.pb.h"

namespace kairos::app::auth {

namespace {

namespace apb = cosmos::auth::v1beta1;

constexpr FieldSpec kParamsFields[] = {
    {1, "max_memo_characters", ProtoKind::kUint64},
    {2, "tx_sig_limit", ProtoKind::kUint64},
    {3, "tx_size_cost_per_byte", ProtoKind::kUint64},
    {4, "sig_verify_cost_ed25519", ProtoKind::kUint64},
    {5, "sig_verify_cost_secp256k1", ProtoKind::kUint64},
};
constexpr MessageSpec kParamsSpec{"Params", kParamsFields};

// The five fields in field-number order (1..5), for decoding and copying.
constexpr std::uint64_t SdkParams::* kSdkFields[] = {
    &SdkParams::max_memo_characters, &SdkParams::tx_sig_limit, &SdkParams::tx_size_cost_per_byte,
    &SdkParams::sig_verify_cost_ed25519, &SdkParams::sig_verify_cost_secp256k1};
constexpr std::uint64_t ante::AuthParams::* kAnteFields[] = {
    &ante::AuthParams::max_memo_characters, &ante::AuthParams::tx_sig_limit,
    &ante::AuthParams::tx_size_cost_per_byte, &ante::AuthParams::sig_verify_cost_ed25519,
    &ante::AuthParams::sig_verify_cost_secp256k1};

}  // namespace

SdkParams SdkParams::Of(const ante::AuthParams& p) {
  SdkParams out;
  for (std::size_t i = 0; i < std::size(kSdkFields); ++i) out.*kSdkFields[i] = p.*kAnteFields[i];
  return out;
}

ante::AuthParams SdkParams::ApplyTo(ante::AuthParams base) const {
  for (std::size_t i = 0; i < std::size(kSdkFields); ++i) base.*kAnteFields[i] = this->*kSdkFields[i];
  return base;
}

SdkParams SdkParams::FromProto(const apb::Params& p) {
  return {p.max_memo_characters(), p.tx_sig_limit(), p.tx_size_cost_per_byte(),
          p.sig_verify_cost_ed25519(), p.sig_verify_cost_secp256k1()};
}

void SdkParams::ToProto(apb::Params* out) const {
  out->set_max_memo_characters(max_memo_characters);
  out->set_tx_sig_limit(tx_sig_limit);
  out->set_tx_size_cost_per_byte(tx_size_cost_per_byte);
  out->set_sig_verify_cost_ed25519(sig_verify_cost_ed25519);
  out->set_sig_verify_cost_secp256k1(sig_verify_cost_secp256k1);
}

std::string MsgUpdateParams::Encode() const {
  apb::MsgUpdateParams pb;
  pb.set_authority(AddressText(authority_address, authority));
  params.ToProto(pb.mutable_params());
  return SerializeDeterministic(pb);
}

bool DecodeMsg(ProtoReader& reader, std::string_view type_url, std::string_view data,
               const ProtoPath& path, ante::Msg* out) {
  if (type_url != MsgUpdateParams::kTypeUrl) {
    return reader.Fail(ante::kTxDecode, "unable to resolve type URL " +
                                            ProtoReader::Quote(type_url) + " in " + path.Render());
  }
  MsgUpdateParams m;
  auto decode_params = [&](std::string_view b, const ProtoPath& at) {
    return reader.Walk(b, kParamsSpec, at,
                       [&](const FieldSpec& f, std::uint64_t v, std::string_view) {
                         m.params.*kSdkFields[f.number - 1] = v;
                         return true;
                       });
  };
  if (!DecodeUpdateParams(reader, data, path, &m.authority_address, &m.authority,
                          decode_params)) {
    return false;
  }
  *out = std::move(m);
  return true;
}

}  // namespace kairos::app::auth
