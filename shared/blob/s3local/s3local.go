package s3local

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/rclone/gofakes3"
	"github.com/rclone/gofakes3/s3mem"
)

// minAccessKeyLen is the shortest access key ID gofakes3 accepts in a signature.
const minAccessKeyLen = 3

// Server is a running in-process S3 server. Its objects live in memory and are lost on Close.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Start serves S3 on addr ("127.0.0.1:0" picks a free port) until Close. Only requests signed
// (AWS Signature Version 4, headers or presigned query) with accessKey and secretKey are
// served; any other request gets S3's 403 error. accessKey must be at least 3 characters and
// secretKey must not be empty: without a key pair gofakes3 would serve anyone.
func Start(addr, accessKey, secretKey string) (*Server, error) {
	return StartKeys(addr, map[string]string{accessKey: secretKey})
}

// StartKeys is Start for several key pairs (access key: secret key), each of which signs.
func StartKeys(addr string, keys map[string]string) (*Server, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("s3local: a key pair is required")
	}
	for accessKey, secretKey := range keys {
		if len(accessKey) < minAccessKeyLen || secretKey == "" {
			return nil, fmt.Errorf("s3local: an access key of at least %d characters and a secret key are required", minAccessKeyLen)
		}
	}
	faker := gofakes3.New(s3mem.New(),
		gofakes3.WithV4Auth(keys),
		gofakes3.WithIntegrityCheck(true), // Content-MD5 and x-amz-checksum-* are verified
		gofakes3.WithHostBucket(false),    // path-style addressing, as blob.NewClient uses
	)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("s3local: listen on %s: %w", addr, err)
	}
	s := &Server{
		srv:  &http.Server{Handler: nosniff(faker.Server()), ReadHeaderTimeout: 10 * time.Second},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return s, nil
}

// nosniff makes every answer of h carry X-Content-Type-Options: nosniff, which S3 cannot
// send: objects served locally are never sniffed into a type they were not served as.
func nosniff(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// URL returns the server's endpoint, such as "http://127.0.0.1:41234", for
// AWS_ENDPOINT_URL_S3 or aws.Config.BaseEndpoint.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server at once, dropping open connections, and waits until it has stopped.
// Calling it again does nothing.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("s3local: close: %w", err)
	}
	return nil
}
