package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// certLifetime covers any test run; the clock skew allowance keeps a freshly made certificate
// valid on a machine whose clock steps back a little.
const (
	certLifetime = 7 * 24 * time.Hour
	clockSkew    = time.Hour
)

// keyPair is a certificate with its private key, both also kept PEM-encoded for files and
// kubeconfigs.
type keyPair struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// pki is every credential one control plane uses, written into its work dir.
type pki struct {
	ca        *keyPair
	apiserver *keyPair
	admin     *keyPair
	user      *keyPair

	caFile            string
	apiserverCertFile string
	apiserverKeyFile  string
	saPublicKeyFile   string
	saPrivateKeyFile  string
}

// newPKI makes a CA, the API server's serving certificate, the service-account signing key
// and client certificates for the admin and for user, and writes them under dir.
func newPKI(dir, user string) (*pki, error) {
	p := &pki{
		caFile:            filepath.Join(dir, "ca.crt"),
		apiserverCertFile: filepath.Join(dir, "apiserver.crt"),
		apiserverKeyFile:  filepath.Join(dir, "apiserver.key"),
		saPublicKeyFile:   filepath.Join(dir, "sa.pub"),
		saPrivateKeyFile:  filepath.Join(dir, "sa.key"),
	}
	var err error
	if p.ca, err = newCertificate(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "schedhost-test-ca"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil); err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	if p.apiserver, err = newCertificate(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}, p.ca); err != nil {
		return nil, fmt.Errorf("API server certificate: %w", err)
	}
	if p.admin, err = newClientCertificate("admin", []string{"system:masters"}, p.ca); err != nil {
		return nil, fmt.Errorf("admin certificate: %w", err)
	}
	if p.user, err = newClientCertificate(user, nil, p.ca); err != nil {
		return nil, fmt.Errorf("%s certificate: %w", user, err)
	}

	// kube-apiserver verifies and issues service-account tokens with an RSA key (RS256).
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("service-account key: %w", err)
	}
	saPublic, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("service-account key: %w", err)
	}

	files := []struct {
		path string
		data []byte
	}{
		{p.caFile, p.ca.certPEM},
		{p.apiserverCertFile, p.apiserver.certPEM},
		{p.apiserverKeyFile, p.apiserver.keyPEM},
		{p.saPublicKeyFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPublic})},
		{p.saPrivateKeyFile, pem.EncodeToMemory(&pem.Block{
			Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)})},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// newClientCertificate makes a client certificate whose subject kube-apiserver reads as the
// user name (CN) and groups (O).
func newClientCertificate(name string, groups []string, ca *keyPair) (*keyPair, error) {
	return newCertificate(&x509.Certificate{
		Subject:     pkix.Name{CommonName: name, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca)
}

// newCertificate completes template with a fresh P-256 key, serial and validity and signs it
// with ca, or with its own key when ca is nil.
func newCertificate(template *x509.Certificate, ca *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	template.SerialNumber = serial
	template.NotBefore = now.Add(-clockSkew)
	template.NotAfter = now.Add(certLifetime)

	parent, signer := template, crypto.Signer(key)
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, key.Public(), signer)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &keyPair{
		cert:    cert,
		key:     key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// writeKubeconfig writes a kubeconfig for server whose one context, named name, authenticates
// with client's certificate; everything is embedded so the file stands alone.
func writeKubeconfig(path, name, server string, ca, client *keyPair) error {
	config := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{
			"schedhost-test": {Server: server, CertificateAuthorityData: ca.certPEM},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{
			name: {ClientCertificateData: client.certPEM, ClientKeyData: client.keyPEM},
		},
		Contexts: map[string]*clientcmdapi.Context{
			name: {Cluster: "schedhost-test", AuthInfo: name},
		},
		CurrentContext: name,
	}
	return clientcmd.WriteToFile(config, path)
}
