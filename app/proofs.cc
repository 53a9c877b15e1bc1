#include "app/proofs.h"

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

}  // namespace

ics23::CommitmentProof ToCommitmentProof(const std::string& key, const store::KeyProof& proof) {
  ics23::CommitmentProof out;
  if (proof.exist) {
    FillExistence(*proof.exist, out.mutable_exist());
    return out;
  }
  ics23::NonExistenceProof* nonexist = out.mutable_nonexist();
  nonexist->set_key(key);
  if (proof.left) FillExistence(*proof.left, nonexist->mutable_left());
  if (proof.right) FillExistence(*proof.right, nonexist->mutable_right());
  return out;
}

tendermint::crypto::ProofOps ToProofOps(const std::string& key, const store::KeyProof& proof) {
  tendermint::crypto::ProofOps ops;
  tendermint::crypto::ProofOp* op = ops.add_ops();
  op->set_type(kProofOpType);
  op->set_key(key);
  ToCommitmentProof(key, proof).SerializeToString(op->mutable_data());
  return ops;
}

}  // namespace kairos::app
