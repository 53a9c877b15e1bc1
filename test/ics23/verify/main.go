// ics23-verify checks Kairos proofs with the ICS-23 reference implementation (Go,
// github.com/cosmos/ics23/go), which Kairos did not write.
//
// Input: JSON lines on stdin, one proof each:
//
//	{"name": "...", "root": "<hex>", "key": "<hex>", "value": "<hex>" | null,
//	 "proof": "<hex CommitmentProof>", "expect": true|false}
//
// A non-null value asks for membership (key = value), null for non-membership. Every line is
// verified against ics23.SmtSpec; a result that differs from "expect" is printed. The last line
// is "N passed, M failed"; the exit status is 1 if anything failed or no input was read.
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	ics23 "github.com/cosmos/ics23/go"
)

type item struct {
	Name   string  `json:"name"`
	Root   string  `json:"root"`
	Key    string  `json:"key"`
	Value  *string `json:"value"`
	Proof  string  `json:"proof"`
	Expect bool    `json:"expect"`
}

func verify(it item) (bool, error) {
	root, err := hex.DecodeString(it.Root)
	if err != nil {
		return false, fmt.Errorf("root: %w", err)
	}
	key, err := hex.DecodeString(it.Key)
	if err != nil {
		return false, fmt.Errorf("key: %w", err)
	}
	raw, err := hex.DecodeString(it.Proof)
	if err != nil {
		return false, fmt.Errorf("proof: %w", err)
	}
	var proof ics23.CommitmentProof
	if err := proof.Unmarshal(raw); err != nil {
		return false, nil // an undecodable proof does not verify
	}
	if it.Value == nil {
		return ics23.VerifyNonMembership(ics23.SmtSpec, root, &proof, key), nil
	}
	value, err := hex.DecodeString(*it.Value)
	if err != nil {
		return false, fmt.Errorf("value: %w", err)
	}
	return ics23.VerifyMembership(ics23.SmtSpec, root, &proof, key, value), nil
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	passed, failed := 0, 0
	for in.Scan() {
		var it item
		if err := json.Unmarshal(in.Bytes(), &it); err != nil {
			fmt.Printf("bad input line: %v\n", err)
			failed++
			continue
		}
		ok, err := verify(it)
		if err != nil {
			fmt.Printf("FAIL %s: %v\n", it.Name, err)
			failed++
		} else if ok != it.Expect {
			fmt.Printf("FAIL %s: verified=%v, expected %v\n", it.Name, ok, it.Expect)
			failed++
		} else {
			passed++
		}
	}
	if err := in.Err(); err != nil {
		fmt.Printf("reading input: %v\n", err)
		failed++
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 || passed == 0 {
		os.Exit(1)
	}
}
