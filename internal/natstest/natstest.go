package natstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// ClientTLS is the files of a client of a TLS server: the CA that signed
// the server's certificate, and a client certificate and its key.
type ClientTLS struct{ CA, Cert, Key string }

// TLS makes a certificate authority, a server certificate for 127.0.0.1
// and a client certificate, writes the CA and the client's files in dir
// (PEM), and sets o to require TLS and a client certificate signed by
// the CA.
func TLS(tb testing.TB, o *server.Options, dir string) ClientTLS {
	tb.Helper()
	caKey, caDER := cert(tb, &x509.Certificate{Subject: pkix.Name{CommonName: "pregao test CA"}, IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}, nil, nil)
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		tb.Fatal(err)
	}
	srvKey, srvDER := cert(tb, &x509.Certificate{Subject: pkix.Name{CommonName: "nats"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames: []string{"localhost"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey)
	cliKey, cliDER := cert(tb, &x509.Certificate{Subject: pkix.Name{CommonName: "pregao"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool,
		Certificates: []tls.Certificate{{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}}}
	o.TLS, o.TLSVerify, o.TLSTimeout = true, true, 5
	c := ClientTLS{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "client.pem"), Key: filepath.Join(dir, "client-key.pem")}
	write(tb, c.CA, "CERTIFICATE", caDER)
	write(tb, c.Cert, "CERTIFICATE", cliDER)
	kb, err := x509.MarshalECPrivateKey(cliKey)
	if err != nil {
		tb.Fatal(err)
	}
	write(tb, c.Key, "EC PRIVATE KEY", kb)
	return c
}

// cert makes a key and a certificate of tmpl signed by parent's key (nil:
// self-signed).
func cert(tb testing.TB, tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		tb.Fatal(err)
	}
	return key, der
}

func write(tb testing.TB, path, kind string, der []byte) {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// Operator sets o to trust only a new operator, whose one account may
// use JetStream (and a system account), and writes the credentials of a user of that account
// in dir; it returns their file (a .creds file).
func Operator(tb testing.TB, o *server.Options, dir string) string {
	tb.Helper()
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	okp, err := nkeys.CreateOperator()
	must(err)
	opub, _ := okp.PublicKey()
	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "pregao-test"
	// JetStream needs a system account.
	skp, err := nkeys.CreateAccount()
	must(err)
	spub, _ := skp.PublicKey()
	sc := jwt.NewAccountClaims(spub)
	sc.Name = "SYS"
	sjwt, err := sc.Encode(okp)
	must(err)
	oc.SystemAccount = spub
	akp, err := nkeys.CreateAccount()
	must(err)
	apub, _ := akp.PublicKey()
	ac := jwt.NewAccountClaims(apub)
	ac.Name = "PREGAO"
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	ajwt, err := ac.Encode(okp)
	must(err)
	ukp, err := nkeys.CreateUser()
	must(err)
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	uc.Name = "feed"
	ujwt, err := uc.Encode(akp)
	must(err)
	seed, _ := ukp.Seed()
	creds, err := jwt.FormatUserConfig(ujwt, seed)
	must(err)
	res := &server.MemAccResolver{}
	must(res.Store(apub, ajwt))
	must(res.Store(spub, sjwt))
	o.TrustedOperators, o.SystemAccount = []*jwt.OperatorClaims{oc}, spub
	o.AccountResolver = res
	path := filepath.Join(dir, "user.creds")
	must(os.WriteFile(path, creds, 0o600))
	return path
}

// Start starts a JetStream server with o on 127.0.0.1 (a free port, its
// store in a temporary folder), shut down when the test ends, and
// returns its client address, HOST:PORT.
func Start(tb testing.TB, o *server.Options) string {
	tb.Helper()
	o.Host, o.Port = "127.0.0.1", -1
	o.JetStream, o.StoreDir = true, tb.TempDir()
	o.NoSigs, o.NoLog = true, true
	srv, err := server.NewServer(o)
	if err != nil {
		tb.Fatal(err)
	}
	srv.Start()
	tb.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		tb.Fatal("the NATS server did not start")
	}
	return srv.Addr().String()
}
