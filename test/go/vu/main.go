// Prints the protobuf bytes of a few abci.ValidatorUpdate values as CometBFT's own Go types
// encode them (the version is go.mod's, v0.38.25, or with -modfile=go.v040.mod v0.40.0), one
// C++ initializer per line, for test/unit/poa_validator_update_vectors.inc. Run through
// test/go/gen_vectors.sh.
package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"runtime/debug"

	abci "github.com/cometbft/cometbft/abci/types"
)

// The version of CometBFT this program was built with (its go.mod's), from the build info:
// version.TMCoreSemVer is not it (v0.40.0 says "0.39.0").
func cometVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/cometbft/cometbft" {
				return dep.Version
			}
		}
	}
	fmt.Fprintln(os.Stderr, "no cometbft in the build info")
	os.Exit(1)
	return ""
}

// Fixed keys: CometBFT's encoding copies the bytes (it does not check the curve point), so any
// bytes of the right length give the wire bytes of that key type.
func key(first byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = first + byte(i)
	}
	return b
}

func main() {
	ed := key(0x01, 32)
	secp := append([]byte{0x02}, key(0x40, 32)...)
	const maxTotal = int64(^uint64(0)>>1) / 8 // types.MaxTotalVotingPower
	cases := []struct {
		keyType string
		pk      []byte
		power   int64
	}{
		{"ed25519", ed, 0}, {"ed25519", ed, 1}, {"ed25519", ed, 10}, {"ed25519", ed, 300},
		{"ed25519", ed, maxTotal},
		{"secp256k1", secp, 0}, {"secp256k1", secp, 7}, {"secp256k1", secp, 1 << 40},
	}
	v := cometVersion()
	for _, c := range cases {
		vu := abci.UpdateValidator(c.pk, c.power, c.keyType)
		b, err := vu.Marshal()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("{\"%s\", \"%s\", \"%s\", %dLL, \"%s\"},\n", v, c.keyType,
			hex.EncodeToString(c.pk), c.power, hex.EncodeToString(b))
	}
}
