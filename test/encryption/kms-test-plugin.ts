import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { KMS_V2_SERVICE } from '../../apps/api/src/encryption/kms/kms-v2.service.js';

/** Calls the plugin answered, by method. */
export interface KmsCalls {
  Status: number;
  Encrypt: number;
  Decrypt: number;
}

/**
 * A real KMS v2 plugin for tests and the benchmark: upstream's
 * KeyManagementService over gRPC on a unix socket, wrapping with AES-GCM
 * under a key per key_id (kept in memory: `rotate()` makes a new current
 * one, older ones still decrypt). Counts every call; can be stopped and
 * started again on the same socket, made unhealthy, or slow.
 */
export class KmsTestPlugin {
  readonly calls: KmsCalls = { Status: 0, Encrypt: 0, Decrypt: 0 };
  private readonly keks = new Map<string, Buffer>();
  private current = '';
  private server: grpc.Server | undefined;
  /** Milliseconds every call waits before answering. */
  delayMs = 0;
  /** What Status answers as healthz. */
  healthz = 'ok';

  constructor(readonly socket: string) {
    this.rotate();
  }

  /** `unix://` endpoint of the socket. */
  get endpoint(): string {
    return `unix://${this.socket}`;
  }

  /** The current key_id. */
  get keyId(): string {
    return this.current;
  }

  /** Makes a new KEK the current one (a new key_id); returns it. */
  rotate(): string {
    this.current = `kek-${this.keks.size + 1}-${randomBytes(4).toString('hex')}`;
    this.keks.set(this.current, randomBytes(32));
    return this.current;
  }

  /** Listens on the socket (removing a stale socket file first). */
  async start(): Promise<void> {
    rmSync(this.socket, { force: true });
    const server = new grpc.Server();
    const wait = (): Promise<void> => new Promise((r) => setTimeout(r, this.delayMs));
    server.addService(KMS_V2_SERVICE, {
      Status: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => {
        this.calls.Status++;
        void wait().then(() => cb(null, { version: 'v2', healthz: this.healthz, key_id: this.current }));
      },
      Encrypt: (call: grpc.ServerUnaryCall<{ plaintext: Buffer }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        this.calls.Encrypt++;
        const nonce = randomBytes(12);
        const c = createCipheriv('aes-256-gcm', this.keks.get(this.current)!, nonce);
        const ct = Buffer.concat([nonce, c.update(call.request.plaintext), c.final(), c.getAuthTag()]);
        void wait().then(() => cb(null, { ciphertext: ct, key_id: this.current, annotations: { 'test.plinth.dev': Buffer.from('v1') } }));
      },
      Decrypt: (call: grpc.ServerUnaryCall<{ ciphertext: Buffer; key_id: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        this.calls.Decrypt++;
        const kek = this.keks.get(call.request.key_id);
        if (!kek) return cb({ code: grpc.status.NOT_FOUND, details: `unknown key_id ${call.request.key_id}` });
        const ct = call.request.ciphertext;
        try {
          const d = createDecipheriv('aes-256-gcm', kek, ct.subarray(0, 12));
          d.setAuthTag(ct.subarray(ct.length - 16));
          const plaintext = Buffer.concat([d.update(ct.subarray(12, ct.length - 16)), d.final()]);
          void wait().then(() => cb(null, { plaintext }));
        } catch {
          cb({ code: grpc.status.INVALID_ARGUMENT, details: 'ciphertext does not decrypt' });
        }
      },
    });
    await new Promise<void>((resolve, reject) => server.bindAsync(this.endpoint, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    this.server = server;
  }

  /** Stops answering at once (calls in flight fail) and removes the socket. */
  async stop(): Promise<void> {
    this.server?.forceShutdown();
    this.server = undefined;
    rmSync(this.socket, { force: true });
  }

  /** A copy of the call counts. */
  snapshot(): KmsCalls {
    return { ...this.calls };
  }
}

/** An EncryptionConfiguration with KMS v2 for secrets (then identity), the plugin at `endpoint`. */
export function kmsConfig(endpoint: string, name = 'testkms', extra = ''): string {
  return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - kms:
          apiVersion: v2
          name: ${name}
          endpoint: ${endpoint}
          timeout: 2s${extra}
      - identity: {}
`;
}
