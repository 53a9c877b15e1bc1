#include "app/proofs.h"

#include <google/protobuf/arena.h>

namespace kairos::app {

namespace {

namespace ics23 = cosmos::ics23::v1;

void FillExistence(const store::ExistenceProof& in, ics23::ExistenceProof* out) {
  out->set_key(in.key);
  out->set_value(in.value);
  ics23::LeafOp* leaf = out->mutable_leaf();
  leaf->set_hash(ics23::SHA256);
  leaf->set_prehash_key(ics23::SHA256);
  leaf->set_prehash_value(ics23::SHA256);
  leaf->set_length(ics23::NO_PREFIX);
  leaf->set_prefix(std::string(1, '\x00'));
  for (const store::PathStep& step : in.path.steps) {
    ics23::InnerOp* op = out->add_path();
    op->set_hash(ics23::SHA256);
    const std::string sibling(reinterpret_cast<const char*>(step.sibling.data()),
                              step.sibling.size());
    if (step.we_are_right) {
      op->set_prefix(std::string(1, '\x01') + sibling);  // H(0x01 || sibling || us)
    } else {
      op->set_prefix(std::string(1, '\x01'));  // H(0x01 || us || sibling)
      op->set_suffix(sibling);
    }
  }
}

void FillCommitmentProof(const std::string& key, const store::KeyProof& proof,
                         ics23::CommitmentProof* out) {
  if (proof.exist) {
    FillExistence(*proof.exist, out->mutable_exist());
    return;
  }
  ics23::NonExistenceProof* nonexist = out->mutable_nonexist();
  nonexist->set_key(key);
  if (proof.left) FillExistence(*proof.left, nonexist->mutable_left());
  if (proof.right) FillExistence(*proof.right, nonexist->mutable_right());
}

}  // namespace

ics23::CommitmentProof ToCommitmentProof(const std::string& key, const store::KeyProof& proof) {
  ics23::CommitmentProof out;
  FillCommitmentProof(key, proof, &out);
  return out;
}

std::string EncodeCommitmentProof(const std::string& key, const store::KeyProof& proof) {
  // A path is ~20 inner ops, each a message and one or two strings: built in one arena, on
  // the stack while it fits, instead of ~60 heap allocations and frees per path.
  alignas(8) char initial[16384];
  google::protobuf::ArenaOptions options;
  options.initial_block = initial;
  options.initial_block_size = sizeof initial;
  google::protobuf::Arena arena(options);
  auto* out = google::protobuf::Arena::CreateMessage<ics23::CommitmentProof>(&arena);
  FillCommitmentProof(key, proof, out);
  return out->SerializeAsString();
}

tendermint::crypto::ProofOps ToProofOps(const std::string& key, const store::KeyProof& proof) {
  tendermint::crypto::ProofOps ops;
  tendermint::crypto::ProofOp* op = ops.add_ops();
  op->set_type(kProofOpType);
  op->set_key(key);
  op->set_data(EncodeCommitmentProof(key, proof));
  return ops;
}

}  // namespace kairos::app
