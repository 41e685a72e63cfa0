package bench

import (
	"crypto/sha256"
	"encoding/hex"
)

func hexSHA(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}
