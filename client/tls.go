package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
)

// WithRootCAs trusts the certificate authorities in pool (instead of the system's) for an https:// server, for
// example one whose certificate a private CA issued. With WithHTTPClient too, the pool is set on that client's
// *http.Transport (a copy of it); a client with another kind of transport is left as it is.
func WithRootCAs(pool *x509.CertPool) Option {
	return func(c *Client) { c.rootCAs = pool }
}

// LoadCAFile reads PEM certificates (a CA bundle) for WithRootCAs.
func LoadCAFile(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path) //nolint:gosec // the caller names its own CA bundle
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("CA file: no PEM certificate in " + path)
	}
	return pool, nil
}

// applyRootCAs installs c.rootCAs on c's transport (New, after every option).
func (c *Client) applyRootCAs() {
	if c.rootCAs == nil {
		return
	}
	var base *http.Transport
	switch t := c.hc.Transport.(type) {
	case nil:
		base = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		base = t.Clone()
	default:
		return
	}
	if base.TLSClientConfig == nil {
		base.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	base.TLSClientConfig.RootCAs = c.rootCAs
	hc := *c.hc
	hc.Transport = base
	c.hc = &hc
}
