// Package labsvc runs the real services that pullpath's tests, loopback
// demo, network-namespace lab and benchmarks pull from. Nothing here is a
// mock: the registry is distribution's reference registry run in-process,
// DNS is a miekg/dns authoritative server, tokens are ES256 JWTs that
// distribution's own verifier accepts.
//
// Every server listens only on the IP:PORT its caller gives (port 0 picks
// one), reports its real address with Addr, and stops on Close or when the
// context passed to its Start function ends:
//
//   - pki.go: NewCA, (*CA).Issue with LeafOptions (names, IPs, validity:
//     trusted, expired, not-yet-valid, wrong-name certificates), PEM
//     encoders, (*CA).WriteCAFile.
//   - image.go: WriteImage streams a deterministic image (ImageSpec: seeded
//     pseudo-random uncompressed tar layers, one manifest per platform, an
//     OCI index for several) into registry storage and returns descriptors.
//   - registry.go: StartRegistry (RegistryConfig: storage root, TLS, auth
//     none|basic|token, redirect of blob GET/HEAD to a blob host).
//   - blob.go: StartBlobHost serves the storage's blob files with Range
//     support, optional BlobFaults, and records every request (including
//     whether an Authorization header arrived).
//   - token.go: StartTokenServer issues tokens per user and scope, with
//     DenyForbidden (403 DENIED) or DenyEmpty (empty access) for denied scopes.
//   - dns.go: StartDNS answers A/AAAA/CNAME per name with per-name
//     behaviours (nxdomain, servfail, refused, drop, nodata); LookupIP and
//     DialContextVia resolve through it without the machine's resolver.
//   - stack.go: StartStack brings all of it up on loopback with host names
//     under lab.test, stores the image and writes a node-context folder
//     (resolv.conf, hosts, certs.d, ca.crt, docker config.json).
//
// The config structs carry JSON tags so that a lab process can start one
// service from a file; certificates and keys then come from files.
package labsvc
