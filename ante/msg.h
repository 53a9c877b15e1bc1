// ante::Msg: one decoded message of a tx, as the ante pipeline and the app's plumbing see it.
//
// The message types themselves belong to their modules (app/<module>/msgs.h: bank's MsgSend,
// the locks' MsgAcquire, ...); the ante knows a message only by its type URL and its signer
// (the SDK's GetSigners: one signer per message here), and the tx codec only by its encoding.
// A message type T is any copyable struct with
//
//   static constexpr std::string_view kTypeUrl;   // "/cosmos.bank.v1beta1.MsgSend"
//   const std::string& signer() const;            // raw address bytes
//   std::string Encode() const;                   // the protobuf bytes of Any.value
//
// and optionally `const Coins& spends() const`: what the message takes from its signer's
// balance besides the fee (MsgSend's amount), which the mempool reserves for pooled txs.
// Message structs stay plain aggregates (`bank::MsgSend{from_address, to_address, ...}`).
//
// Msg is a value: copying it shares the immutable message (one allocation per decoded message).
// Thread-safe to read from any number of threads.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "ante/coins.h"

namespace kairos::ante {

template <class T>
concept MessageType = std::copy_constructible<T> && requires(const T& m) {
  { T::kTypeUrl } -> std::convertible_to<std::string_view>;
  { m.signer() } -> std::same_as<const std::string&>;
  { m.Encode() } -> std::same_as<std::string>;
};

class Msg {
 public:
  Msg() = default;
  template <MessageType T>
    requires(!std::is_same_v<std::decay_t<T>, Msg>)
  Msg(T message)  // NOLINT(google-explicit-constructor): a message is a Msg
      : impl_(std::make_shared<const Model<T>>(std::move(message))) {}

  bool empty() const { return impl_ == nullptr; }
  // REQUIRES: !empty() for the three below.
  std::string_view type_url() const { return impl_->type_url(); }
  const std::string& signer() const { return impl_->signer(); }
  std::string Encode() const { return impl_->Encode(); }
  // What the message takes from its signer besides the fee; null when nothing.
  const Coins* spends() const { return impl_->spends(); }

  // The message as its own type; null when it is of another type.
  template <MessageType T>
  const T* As() const {
    if (impl_ == nullptr || impl_->type_url() != T::kTypeUrl) return nullptr;
    return &static_cast<const Model<T>*>(impl_.get())->message;
  }
  // The same, throwing std::logic_error when the type differs (tests, and code that checked).
  template <MessageType T>
  const T& Get() const {
    const T* m = As<T>();
    if (m == nullptr) {
      throw std::logic_error("Msg::Get: a " + std::string(empty() ? "null" : type_url()) +
                             ", not a " + std::string(T::kTypeUrl));
    }
    return *m;
  }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual std::string_view type_url() const = 0;
    virtual const std::string& signer() const = 0;
    virtual std::string Encode() const = 0;
    virtual const Coins* spends() const = 0;
  };
  template <class T>
  struct Model final : Concept {
    explicit Model(T m) : message(std::move(m)) {}
    std::string_view type_url() const override { return T::kTypeUrl; }
    const std::string& signer() const override { return message.signer(); }
    std::string Encode() const override { return message.Encode(); }
    const Coins* spends() const override {
      if constexpr (requires(const T& m) {
                      { m.spends() } -> std::same_as<const Coins&>;
                    }) {
        return &message.spends();
      } else {
        return nullptr;
      }
    }
    T message;
  };
  // Type URLs are unique across modules (the module list checks it), so As<T> may cast on a
  // type-URL match.
  std::shared_ptr<const Concept> impl_;
};

inline const std::string& SignerOf(const Msg& msg) { return msg.signer(); }

}  // namespace kairos::ante
