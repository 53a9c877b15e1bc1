// What the messages only the chain's authority may send share, whichever module they belong to
// (each module's MsgUpdateParams, poa's messages): the MsgUpdateParams envelope on the wire and
// the first steps of their handlers.
//
// Thread-safe: pure functions over their arguments.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "ante/context.h"
#include "ante/errors.h"
#include "app/module.h"
#include "app/proto_reader.h"

namespace kairos::app {

// Decodes the SDK's MsgUpdateParams{string authority = 1; Params params = 2} (canonical): the
// authority's text as sent and its raw bytes (code 2 naming "authority" when it is not a
// kairos1 address), and `decode_params` on the params message's bytes with its path
// ("<path>.params"), when it is present. False with reader.error set.
bool DecodeUpdateParams(
    ProtoReader& reader, std::string_view data, const ProtoPath& path,
    std::string* authority_text, std::string* authority,
    const std::function<bool(std::string_view params, const ProtoPath& at)>& decode_params);

// CheckAuthority (module.h: code 4 unless `authority` is the chain's), then the SDK's
// "message" event (action = the type URL, sender = the authority, module, msg_index).
ante::TxStatus BeginAuthorityMsg(ante::Context& ctx, const AuthorityKeeper* keeper,
                                 std::string_view authority, std::string_view type_url,
                                 std::string_view module, std::size_t msg_index);

}  // namespace kairos::app
