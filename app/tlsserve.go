package app

import (
	"crypto/tls"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// certReloadCheckInterval is how often, at most, a TLS handshake looks at the certificate files' metadata for a
// rotation (docs/security.md#tls).
const certReloadCheckInterval = time.Second

// certReloader serves the configured key pair and picks up a rotated one without a restart: a handshake that comes
// at least certReloadCheckInterval after the last look stats both files and reloads them when either changed, and
// SIGHUP (Runtime.Run) reloads at once. A new pair that does not load keeps the old certificate in service and
// logs error_class tls_reload_failed (never the file contents).
type certReloader struct {
	certFile, keyFile string
	log               zerolog.Logger
	now               func() time.Time

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string    // metadata of both files when last loaded (or tried)
	checked time.Time // last look at the files
}

func newCertReloader(certFile, keyFile string, log zerolog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log, now: time.Now} // clock:process the reload throttle measures process time between handshakes, not database time
	r.stamp = r.fileStamp()
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("POWERCONTEXT_TLS_CERT_FILE/POWERCONTEXT_TLS_KEY_FILE: cannot load the key pair: %v", errorWithoutPath(err))
	}
	r.cert, r.checked = &cert, r.now()
	return r, nil
}

// fileStamp summarises both files' size and modification time (of the symlink targets); a rotation in place, by
// rename, or by a symlink swap (as Kubernetes does for mounted secrets) changes it.
func (r *certReloader) fileStamp() string {
	out := ""
	for _, f := range []string{r.certFile, r.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			out += "missing;"
			continue
		}
		out += fmt.Sprintf("%d/%d;", fi.Size(), fi.ModTime().UnixNano())
	}
	return out
}

// GetCertificate is tls.Config.GetCertificate.
func (r *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.now(); now.Sub(r.checked) >= certReloadCheckInterval {
		r.checked = now
		if st := r.fileStamp(); st != r.stamp {
			r.reloadLocked(st, "file_change")
		}
	}
	return r.cert, nil
}

// Reload loads the files again whatever their metadata says (SIGHUP).
func (r *certReloader) Reload() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checked = r.now()
	r.reloadLocked(r.fileStamp(), "sighup")
}

func (r *certReloader) reloadLocked(stamp, trigger string) {
	r.stamp = stamp // a bad pair is logged once per change, not at every handshake
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		r.log.Error().Str("error_class", "tls_reload_failed").Str("trigger", trigger).
			Msg("TLS key pair reload failed; the previous certificate stays in service")
		return
	}
	r.cert = &cert
	r.log.Info().Str("trigger", trigger).Msg("TLS certificate reloaded")
}

// serverTLSConfig is the listener's TLS configuration: TLS 1.2 at least, the certificate from r. Client
// certificates are not asked for: principals are bearer tokens (docs/security.md#tls).
func serverTLSConfig(r *certReloader) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
}

// reloadOnSIGHUP reloads the certificate at every SIGHUP until the returned function is called.
func (r *Runtime) reloadOnSIGHUP() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				r.certs.Reload()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
