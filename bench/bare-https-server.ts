import { createServer } from 'node:https';

// The transport floor of the write benchmark (bench/write.bench.ts), run as a child process: a bare node:https
// server with the API server's TLS settings (its serving certificate, client certificates requested and
// verified against the client CA but not required, TLS 1.2+) that answers every POST with its JSON body and a
// resourceVersion added, as a create answers with the stored object. No framework, no routing, no
// authentication, no database: what one Node thread spends per kept-alive HTTPS request and nothing else.

interface Init {
  key: string;
  cert: string;
  ca: string;
}

const init = JSON.parse(process.env.BARE_HTTPS_INIT ?? '{}') as Init;
let revision = 0;

const server = createServer({ key: init.key, cert: init.cert, ca: init.ca, requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let out: string;
    try {
      const obj = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { metadata?: Record<string, unknown> };
      obj.metadata = { ...obj.metadata, resourceVersion: String(++revision) };
      out = JSON.stringify(obj);
    } catch {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});

server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.send?.({ port: typeof addr === 'object' && addr ? addr.port : 0 });
});

// Exit normally when the benchmark ends this child, so a --cpu-prof given to it is written.
process.on('SIGTERM', () => process.exit(0));
