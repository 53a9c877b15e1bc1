// Deterministic protobuf serialization: fields in number order, map entries sorted, defaults
// omitted. Every proto that goes into the state or a hash uses it. Thread-safe.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>

#include <string>

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

}  // namespace kairos::app
