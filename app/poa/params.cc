#include "app/poa/params.h"

#include <string>

namespace kairos::app::poa {

Status Validate(const Params& p) {
  if (p.max_validators < 1 || p.max_validators > kMaxValidatorsLimit) {
    return Status::InvalidArgument("max_validators: must be from 1 to " +
                                   std::to_string(kMaxValidatorsLimit) + ", got " +
                                   std::to_string(p.max_validators));
  }
  return Status::OK();
}

kairos::poa::v1::Params ToProto(const Params& p) {
  kairos::poa::v1::Params pb;
  pb.set_max_validators(p.max_validators);
  return pb;
}

Params FromProto(const kairos::poa::v1::Params& pb) { return Params{pb.max_validators()}; }

}  // namespace kairos::app::poa
