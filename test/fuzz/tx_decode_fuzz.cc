// libFuzzer target for app::DecodeTx: the input is untrusted tx bytes from CheckTx or a block.
//
// Input: the first byte picks a mode.
//   even: the rest is decoded as it is;
//   odd:  the rest edits one of a few valid signed txs built at start-up (ordered secp256k1,
//         unordered ed25519 with payer/granter/timestamp, several messages, one of each
//         kairos.locks.v1 message): 4-byte ops
//         {kind, position hi, position lo, value} that overwrite, insert or erase a byte, so the
//         fuzzer starts deep inside valid txs without a seed corpus.
//
// Checked properties, beyond "no crash, no sanitizer report":
// - decoding is deterministic (the same bytes give the same outcome and log);
// - an error has a non-zero code and a log ending in the code's description;
// - an accepted tx is canonical: libprotobuf parses TxRaw, TxBody, AuthInfo and each message
//   (MsgSend, the locks messages) and re-serializes them to the very same bytes (where no
//   non-critical unknown field was skipped), and the decoded fields agree with what libprotobuf
//   read.
//
// Thread-safety: libFuzzer calls LLVMFuzzerTestOneInput from one thread.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "ante/errors.h"
#include "app/tx_codec.h"
#include "cosmos/bank/v1beta1/tx.pb.h"
#include "cosmos/tx/v1beta1/tx.pb.h"
#include "kairos/locks/v1/tx.pb.h"
#include "app/bank/msgs.h"
#include "app/locks/msgs.h"

namespace {

using kairos::app::bank::MsgSend;
using kairos::ante::Tx;
using kairos::app::TxError;

[[noreturn]] void Violated(const char* what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

template <class M>
void CheckCanonical(std::string_view bytes, bool allow_unknown, const char* what) {
  M m;
  if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) Violated(what);
  if (allow_unknown && !m.GetReflection()->GetUnknownFields(m).empty()) return;
  if (m.SerializeAsString() != bytes) Violated(what);
}

std::vector<std::string> BuildTemplates() {
  using kairos::app::SignerKey;
  using kairos::app::TxSpec;
  const std::string a(20, '\x11'), b(20, '\x22'), c(32, '\x33');
  auto send = [](const std::string& from, const std::string& to, std::string_view coins) {
    MsgSend m;
    m.from = from;
    m.to = to;
    m.amount = *kairos::ante::Coins::Parse(coins);
    return m;
  };
  std::vector<std::string> out;

  TxSpec ordered;
  ordered.msgs.push_back(send(a, b, "10stake"));
  ordered.memo = "hi";
  ordered.fee = *kairos::ante::Coins::Parse("100stake");
  out.push_back(kairos::app::BuildSignedTx(
      ordered, {SignerKey{kairos::crypto::KeyType::kSecp256k1, std::string(32, '\1'), 3, 5, true}},
      "fuzz"));

  TxSpec unordered;
  unordered.msgs.push_back(send(a, c, "1atom,2stake"));
  unordered.msgs.push_back(send(b, a, "3stake"));
  unordered.unordered = true;
  unordered.timeout_unix_nanos = 1'700'000'000'000'000'001;
  unordered.timeout_height = 12;
  unordered.fee_payer = c;
  unordered.fee_granter = b;
  out.push_back(kairos::app::BuildSignedTx(
      unordered,
      {SignerKey{kairos::crypto::KeyType::kEd25519, std::string(32, '\2'), 1, 0, true},
       SignerKey{kairos::crypto::KeyType::kSecp256k1, std::string(32, '\3'), 2, 0, false}},
      "fuzz"));

  TxSpec locks;
  const kairos::app::locks::LockSlot foo{"foo", ""}, book{"book", "alice"};
  locks.msgs.push_back(kairos::app::locks::MsgRegister{"", a});
  locks.msgs.push_back(kairos::app::locks::MsgAcquire{"", a, {foo, book}, 512000});
  locks.msgs.push_back(
      kairos::app::locks::MsgWrite{"", a, book, kairos::app::locks::LockWriteOp::kAdd, -7, 0});
  locks.msgs.push_back(kairos::app::locks::MsgRelease{"", a, "", b});
  locks.msgs.push_back(kairos::app::locks::MsgRefundRegistration{"", a, "", b});
  out.push_back(kairos::app::BuildSignedTx(
      locks, {SignerKey{kairos::crypto::KeyType::kSecp256k1, std::string(32, '\4'), 4, 1, true}},
      "fuzz"));
  return out;
}

// The message's sender as libprotobuf reads it, after checking it is canonical; "" when the
// decoded message is not of this type.
template <class Pb>
std::string CheckedSender(std::string_view bytes, const char* what) {
  CheckCanonical<Pb>(bytes, true, what);
  Pb pb;
  pb.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  return pb.sender();
}

std::string Apply(const std::string& base, const std::uint8_t* ops, std::size_t n) {
  std::string s = base;
  for (std::size_t i = 0; i + 4 <= n; i += 4) {
    const std::size_t pos = ((std::size_t{ops[i + 1]} << 8) | ops[i + 2]) % (s.size() + 1);
    const char value = static_cast<char>(ops[i + 3]);
    switch (ops[i] % 3) {
      case 0:
        if (pos < s.size()) s[pos] = value;
        break;
      case 1: s.insert(s.begin() + static_cast<std::ptrdiff_t>(pos), value); break;
      case 2:
        if (pos < s.size()) s.erase(pos, 1);
        break;
    }
  }
  return s;
}


void CheckAccepted(const std::string& raw, const Tx& tx) {
  CheckCanonical<cosmos::tx::v1beta1::TxRaw>(raw, false, "TxRaw re-serializes to the input");
  CheckCanonical<cosmos::tx::v1beta1::TxBody>(tx.body_bytes, true, "TxBody is canonical");
  CheckCanonical<cosmos::tx::v1beta1::AuthInfo>(tx.auth_info_bytes, false, "AuthInfo is canonical");

  cosmos::tx::v1beta1::TxBody body;
  body.ParseFromString(tx.body_bytes);
  if (static_cast<std::size_t>(body.messages_size()) != tx.msgs.size()) Violated("message count");
  namespace lpb = kairos::locks::v1;
  for (int i = 0; i < body.messages_size(); ++i) {
    const std::string& value = body.messages(i).value();
    const kairos::ante::Msg& msg = tx.msgs[static_cast<std::size_t>(i)];
    if (const auto* send = msg.As<MsgSend>()) {
      CheckCanonical<cosmos::bank::v1beta1::MsgSend>(value, true, "MsgSend is canonical");
      cosmos::bank::v1beta1::MsgSend pb;
      pb.ParseFromString(value);
      if (pb.from_address() != send->from_address || pb.to_address() != send->to_address) {
        Violated("MsgSend addresses");
      }
      if (static_cast<std::size_t>(pb.amount_size()) != send->amount.coins().size()) {
        Violated("MsgSend coin count");
      }
      continue;
    }
    std::string sender;
    if (msg.As<kairos::app::locks::MsgRegister>() != nullptr) {
      sender = CheckedSender<lpb::MsgRegister>(value, "MsgRegister is canonical");
    } else if (msg.As<kairos::app::locks::MsgRefundRegistration>() != nullptr) {
      sender = CheckedSender<lpb::MsgRefundRegistration>(value, "MsgRefundRegistration");
    } else if (const auto* acquire = msg.As<kairos::app::locks::MsgAcquire>()) {
      sender = CheckedSender<lpb::MsgAcquire>(value, "MsgAcquire is canonical");
      lpb::MsgAcquire pb;
      pb.ParseFromString(value);
      if (static_cast<std::size_t>(pb.slots_size()) != acquire->slots.size()) {
        Violated("MsgAcquire slot count");
      }
    } else if (const auto* write = msg.As<kairos::app::locks::MsgWrite>()) {
      sender = CheckedSender<lpb::MsgWrite>(value, "MsgWrite is canonical");
      lpb::MsgWrite pb;
      pb.ParseFromString(value);
      if (pb.value() != write->value || pb.resource() != write->slot.resource ||
          pb.key() != write->slot.key) {
        Violated("MsgWrite fields");
      }
    } else {
      sender = CheckedSender<lpb::MsgRelease>(value, "MsgRelease is canonical");
    }
    namespace locks = kairos::app::locks;
    std::string decoded;
    if (const auto* m = msg.As<locks::MsgRegister>()) decoded = m->sender_address;
    if (const auto* m = msg.As<locks::MsgRefundRegistration>()) decoded = m->sender_address;
    if (const auto* m = msg.As<locks::MsgAcquire>()) decoded = m->sender_address;
    if (const auto* m = msg.As<locks::MsgWrite>()) decoded = m->sender_address;
    if (const auto* m = msg.As<locks::MsgRelease>()) decoded = m->sender_address;
    if (sender != decoded) Violated("locks sender");
  }
  if (body.memo() != tx.memo || body.timeout_height() != tx.timeout_height ||
      body.unordered() != tx.unordered ||
      body.has_timeout_timestamp() != tx.timeout_unix_nanos.has_value()) {
    Violated("TxBody fields");
  }
  cosmos::tx::v1beta1::AuthInfo auth;
  auth.ParseFromString(tx.auth_info_bytes);
  if (static_cast<std::size_t>(auth.signer_infos_size()) != tx.signer_infos.size() ||
      auth.fee().gas_limit() != tx.gas_limit) {
    Violated("AuthInfo fields");
  }
  if (tx.signers.size() < (tx.msgs.empty() ? 0u : 1u)) Violated("signers");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string> templates = BuildTemplates();
  if (size == 0) return 0;
  std::string raw;
  if (data[0] % 2 == 0) {
    raw.assign(reinterpret_cast<const char*>(data + 1), size - 1);
  } else {
    const std::string& base = templates[(data[0] >> 1) % templates.size()];
    raw = Apply(base, data + 1, size - 1);
  }

  auto first = kairos::app::DecodeTx(raw);
  auto second = kairos::app::DecodeTx(raw);
  if (first.index() != second.index()) Violated("decoding is deterministic");
  if (const auto* e = std::get_if<TxError>(&first)) {
    if (e->code == 0 || e->log != std::get<TxError>(second).log) Violated("error code and log");
    const std::string suffix = ": " + std::string(kairos::ante::SdkDescription(e->code));
    if (e->log.size() < suffix.size() ||
        e->log.compare(e->log.size() - suffix.size(), suffix.size(), suffix) != 0) {
      Violated("log ends with the code's description");
    }
    return 0;
  }
  CheckAccepted(raw, std::get<Tx>(first));
  return 0;
}
