// Turns the store's key proofs into ICS-23 CommitmentProofs for SmtSpec, and wraps them as the
// ProofOps of an ABCI Query answer (one op of type "ics23:smt"). Pure; thread-safe.
#pragma once

#include <string>

#include "cosmos/ics23/v1/proofs.pb.h"
#include "store/merkle_store.h"
#include "tendermint/crypto/proof.pb.h"

namespace kairos::app {

inline constexpr char kProofOpType[] = "ics23:smt";

// REQUIRES: `proof` came from MerkleStore::Prove for `key`.
cosmos::ics23::v1::CommitmentProof ToCommitmentProof(const std::string& key,
                                                     const store::KeyProof& proof);
// The same, serialized (what a Query answer carries), built in an arena: no heap allocation
// per message.
std::string EncodeCommitmentProof(const std::string& key, const store::KeyProof& proof);

tendermint::crypto::ProofOps ToProofOps(const std::string& key, const store::KeyProof& proof);

}  // namespace kairos::app
