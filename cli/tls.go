package cli

import (
	"crypto/x509"

	"github.com/powercontext/powercontext/client"
)

// LoadCA reads --ca-file, else $POWERCONTEXT_CA_FILE (nil, nil when neither is set); a file that cannot be read or
// holds no certificate is a UsageError.
func LoadCA(flag string) (*x509.CertPool, error) {
	path := flag
	if path == "" {
		path = envOr(EnvCAFile, "")
	}
	if path == "" {
		return nil, nil
	}
	pool, err := client.LoadCAFile(path)
	if err != nil {
		return nil, usageErrorf("--ca-file: %v", err)
	}
	return pool, nil
}

func caOption(flag string) (client.Option, error) {
	pool, err := LoadCA(flag)
	if err != nil || pool == nil {
		return nil, err
	}
	return client.WithRootCAs(pool), nil
}
