#!/usr/bin/env node
// scorer.js (installed as assay-scorer-node_keywords): an assay scorer plugin in JavaScript, with no Go.
// It performs go-plugin's handshake as docs/protocol.md describes: check the
// magic cookie and protocol version, then serve gRPC on a Unix socket in the
// directory the host made for it (PLUGIN_UNIX_SOCKET_DIR), without TLS, and
// print the one handshake line. When the host offers AutoMTLS instead
// (PLUGIN_CLIENT_CERT is set: an assay before the Unix-socket transport, or
// Windows), make a self-signed TLS certificate, trust only the host's
// certificate and require it, serve on 127.0.0.1 in the given port range,
// and print the handshake line with the certificate. The scorer,
// node_keywords, checks that the answer contains every keyword the task
// lists.
'use strict';

const crypto = require('node:crypto');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const forge = require('node-forge');

const COOKIE_KEY = 'ASSAY_SCORER_PLUGIN';
const COOKIE_VALUE = '4b1d1c5e-assay-scorer-v1-6f0e2a9d';
const PROTOCOL = 1;
const MAX_MESSAGE = 256 << 20;
const PROTO = path.join(__dirname, '..', '..', 'proto', 'assay', 'scorer', 'v1', 'scorer.proto');

const KEY = 'node_keywords';
const TAG = 'ungrounded_answer';
const DESCRIPTION = {
  id: 'node_keywords',
  version: '0.1.0',
  sdk_version: 'node-example-0.1.0',
  protocols: [PROTOCOL],
  kpis: [{ key: KEY, value_type: 'string_list', failure_tag: TAG,
    description: 'words the answer must contain, in any case' }],
  needs: ['answer'],
};

// score grades one case: the fraction of keywords found in the answer. A
// failed check carries the KPI's declared tag, and the result gathers it.
function score(c) {
  const result = { case_id: c.id, score: 0, checks: [], failure_tags: [], diagnostics: [], error: '' };
  const raw = c.task && c.task.kpis ? c.task.kpis[KEY] : undefined;
  if (raw === undefined) {
    result.diagnostics.push(`nothing to check: task "${c.task ? c.task.label : ''}" sets none of the KPI keys node_keywords checks (${KEY})`);
    return result;
  }
  let words;
  try {
    words = JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch (e) {
    words = undefined;
  }
  if (!Array.isArray(words) || !words.every((w) => typeof w === 'string')) {
    const msg = `kpi ${KEY}: want a list of strings, got ${Buffer.from(raw).toString('utf8')}`;
    result.diagnostics.push(msg);
    result.checks.push({ kpi: KEY, score: 0, passed: false, detail: `${msg}; the check cannot run`, evidence: [], failure_tag: TAG });
    result.failure_tags.push(TAG);
    return result;
  }
  const answer = (c.turn && c.turn.answer ? c.turn.answer : '').toLowerCase();
  const missing = words.filter((w) => !answer.includes(w.toLowerCase()));
  const s = words.length === 0 ? 1 : (words.length - missing.length) / words.length;
  const check = { kpi: KEY, score: s, passed: missing.length === 0, evidence: [], failure_tag: '',
    detail: missing.length === 0 ? 'found every keyword in the answer' : `missing keywords: ${missing.join(', ')}` };
  if (!check.passed) {
    check.failure_tag = TAG;
    result.failure_tags.push(TAG);
  }
  result.checks.push(check);
  result.score = s;
  return result;
}

// selfSigned makes the plugin's TLS certificate: a self-signed CA for
// localhost with an ECDSA P-256 key, usable for server and client auth, as
// go-plugin's own are. Node's crypto makes the key and the signature; it
// cannot write an X.509 certificate, so node-forge (pure JS) encodes the
// to-be-signed part, with the key and algorithm fields set to ECDSA.
function selfSigned() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const asn1 = forge.asn1;
  const cert = forge.pki.createCertificate();
  // forge encodes RSA keys only: a placeholder, replaced by the EC key below.
  cert.publicKey = forge.pki.setRsaPublicKey(new forge.jsbn.BigInteger('3'), new forge.jsbn.BigInteger('3'));
  cert.serialNumber = '01' + crypto.randomBytes(8).toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 30 * 1000);
  cert.validity.notAfter = new Date(Date.now() + 262980 * 3600 * 1000);
  const name = [{ name: 'commonName', value: 'localhost' }, { name: 'organizationName', value: 'HashiCorp' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyAgreement: true, keyCertSign: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] },
  ]);
  const ecdsaSHA256 = () => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer('1.2.840.10045.4.3.2').getBytes()),
  ]);
  cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption; // replaced below too
  const tbs = forge.pki.getTBSCertificate(cert);
  tbs.value[2] = ecdsaSHA256(); // signature algorithm
  tbs.value[6] = asn1.fromDer(publicKey.export({ type: 'spki', format: 'der' }).toString('binary')); // subjectPublicKeyInfo
  const tbsDer = Buffer.from(asn1.toDer(tbs).getBytes(), 'binary');
  const sig = crypto.sign('sha256', tbsDer, privateKey); // DER-encoded ECDSA signature
  const whole = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    tbs, ecdsaSHA256(),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, '\x00' + sig.toString('binary')),
  ]);
  const der = Buffer.from(asn1.toDer(whole).getBytes(), 'binary');
  const certPem = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').match(/.{1,64}/g).join('\n')}\n-----END CERTIFICATE-----\n`;
  return { keyPem: Buffer.from(privateKey.export({ type: 'pkcs8', format: 'pem' })), certPem: Buffer.from(certPem), der };
}

function fail(msg) {
  process.stderr.write(`assay-scorer-node_keywords: ${msg}\n`);
  process.exit(1);
}

// empty is the (de)serializer of google.protobuf.Empty: zero bytes.
const empty = { serialize: () => Buffer.alloc(0), deserialize: () => ({}) };

function controller() {
  return {
    Shutdown: {
      path: '/plugin.GRPCController/Shutdown', requestStream: false, responseStream: false,
      requestSerialize: empty.serialize, requestDeserialize: empty.deserialize,
      responseSerialize: empty.serialize, responseDeserialize: empty.deserialize,
    },
  };
}

function main() {
  if (process.argv.includes('--describe')) {
    process.stdout.write(JSON.stringify(DESCRIPTION, null, 2) + '\n');
    return;
  }
  if (process.env[COOKIE_KEY] !== COOKIE_VALUE) {
    fail('this binary is a plugin: assay starts it; it does not run on its own');
  }
  const versions = (process.env.PLUGIN_PROTOCOL_VERSIONS || '').split(',').map((v) => parseInt(v, 10));
  if (!versions.includes(PROTOCOL)) {
    fail(`the host speaks protocol versions ${process.env.PLUGIN_PROTOCOL_VERSIONS}, this plugin ${PROTOCOL}`);
  }
  const clientCert = process.env.PLUGIN_CLIENT_CERT;
  const socketDir = process.env.PLUGIN_UNIX_SOCKET_DIR;
  if (!clientCert && !socketDir) {
    fail('neither PLUGIN_UNIX_SOCKET_DIR nor PLUGIN_CLIENT_CERT is set: the host offered no transport this plugin knows');
  }
  const def = protoLoader.loadSync(PROTO, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def).assay.scorer.v1;
  const server = new grpc.Server({ 'grpc.max_receive_message_length': MAX_MESSAGE, 'grpc.max_send_message_length': MAX_MESSAGE });
  server.addService(pkg.Scorer.service, {
    Describe: (call, cb) => cb(null, DESCRIPTION),
    Score: (call, cb) => {
      if (call.cancelled) {
        cb({ code: grpc.status.CANCELLED, details: 'cancelled by the host' });
        return;
      }
      cb(null, { results: call.request.cases.map(score) });
    },
  });
  server.addService(controller(), { Shutdown: (call, cb) => { cb(null, {}); setImmediate(() => process.exit(0)); } });

  if (!clientCert) {
    listenUnix(server, socketDir);
    return;
  }
  const { keyPem, certPem, der } = selfSigned();
  const creds = grpc.ServerCredentials.createSsl(Buffer.from(clientCert), [{ private_key: keyPem, cert_chain: certPem }], true);
  listen(server, creds, der);
}

// listenUnix serves on a new Unix socket in dir, the private directory the
// host made for this plugin (only its user can enter it), without TLS, and
// prints the handshake line.
function listenUnix(server, dir) {
  const sock = path.join(dir, `plugin${crypto.randomBytes(4).toString('hex')}`);
  server.bindAsync(`unix:${sock}`, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) {
      fail(`listening on ${sock}: ${err.message}`);
    }
    process.stdout.write(`1|${PROTOCOL}|unix|${sock}|grpc\n`);
  });
}

// listen binds the first free port in [PLUGIN_MIN_PORT, PLUGIN_MAX_PORT]
// and prints the handshake line.
function listen(server, creds, der) {
  const min = parseInt(process.env.PLUGIN_MIN_PORT || '10000', 10);
  const max = parseInt(process.env.PLUGIN_MAX_PORT || '25000', 10);
  const tryPort = (port) => {
    if (port > max) {
      fail(`no free port in [${min}, ${max}]`);
    }
    server.bindAsync(`127.0.0.1:${port}`, creds, (err, bound) => {
      if (err) {
        tryPort(port + 1);
        return;
      }
      const cert = der.toString('base64').replace(/=+$/, '');
      process.stdout.write(`1|${PROTOCOL}|tcp|127.0.0.1:${bound}|grpc|${cert}\n`);
    });
  };
  tryPort(min + Math.floor(Math.random() * Math.min(1000, max - min + 1)));
}

main();
