// Deterministic protobuf serialization: fields in number order, map entries sorted, defaults
// omitted. Every proto that goes into the state or a hash uses it. Thread-safe.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "ante/coins.h"
#include "cosmos/base/v1beta1/coin.pb.h"
#include "crypto/bech32.h"

namespace kairos::app {

inline std::string SerializeDeterministic(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

// Parses `data` into `m` (a view of bytes, which MessageLite::ParseFromString cannot take).
inline bool ParseProto(std::string_view data, google::protobuf::MessageLite* m) {
  if (data.size() > static_cast<std::size_t>(INT32_MAX)) return false;
  return m->ParseFromArray(data.data(), static_cast<int>(data.size()));
}

// Coins as repeated cosmos.base.v1beta1.Coin, in their (sorted) order.
inline void SetCoins(const ante::Coins& coins,
                     google::protobuf::RepeatedPtrField<cosmos::base::v1beta1::Coin>* out) {
  for (const ante::Coin& c : coins.coins()) {
    cosmos::base::v1beta1::Coin* pb = out->Add();
    pb->set_denom(c.denom);
    pb->set_amount(ante::ToString(c.amount));
  }
}

// An address as a message carries it: the bech32 text when set, else that of the raw bytes.
inline std::string AddressText(const std::string& text, const std::string& raw) {
  return text.empty() ? crypto::EncodeAccountAddress(raw) : text;
}

// A decimal amount field: "" for zero (proto3's default), else the decimal digits.
inline std::string AmountText(const ante::Uint256& v) {
  return v == 0 ? std::string() : ante::ToString(v);
}

}  // namespace kairos::app
