import * as grpc from '@grpc/grpc-js';
import { fromJSON } from '@grpc/proto-loader';

/**
 * Upstream's `k8s.io/kms/apis/v2` KeyManagementService (package `v2`):
 * Status, Encrypt, Decrypt, with their messages' field names and numbers,
 * as a protobufjs JSON descriptor (no .proto file to ship beside the build).
 */
const KMS_V2_DESCRIPTOR = {
  nested: {
    v2: {
      nested: {
        KeyManagementService: {
          methods: {
            Status: { requestType: 'StatusRequest', responseType: 'StatusResponse' },
            Decrypt: { requestType: 'DecryptRequest', responseType: 'DecryptResponse' },
            Encrypt: { requestType: 'EncryptRequest', responseType: 'EncryptResponse' },
          },
        },
        StatusRequest: { fields: {} },
        StatusResponse: { fields: { version: { type: 'string', id: 1 }, healthz: { type: 'string', id: 2 }, key_id: { type: 'string', id: 3 } } },
        DecryptRequest: {
          fields: {
            ciphertext: { type: 'bytes', id: 1 },
            uid: { type: 'string', id: 2 },
            key_id: { type: 'string', id: 3 },
            annotations: { keyType: 'string', type: 'bytes', id: 4 },
          },
        },
        DecryptResponse: { fields: { plaintext: { type: 'bytes', id: 1 } } },
        EncryptRequest: { fields: { plaintext: { type: 'bytes', id: 1 }, uid: { type: 'string', id: 2 } } },
        EncryptResponse: {
          fields: {
            ciphertext: { type: 'bytes', id: 1 },
            key_id: { type: 'string', id: 2 },
            annotations: { keyType: 'string', type: 'bytes', id: 3 },
          },
        },
      },
    },
  },
};

/** The service definition, for a client here and for a plugin (the tests' own). */
export const KMS_V2_SERVICE: grpc.ServiceDefinition = (() => {
  const pkg = grpc.loadPackageDefinition(fromJSON(KMS_V2_DESCRIPTOR as Parameters<typeof fromJSON>[0], { keepCase: true, defaults: true })) as unknown as {
    v2: { KeyManagementService: grpc.ServiceClientConstructor };
  };
  return pkg.v2.KeyManagementService.service;
})();

/** StatusResponse. */
export interface KmsStatus {
  version: string;
  healthz: string;
  key_id: string;
}

/** EncryptResponse. */
export interface KmsEncryptResponse {
  ciphertext: Buffer;
  key_id: string;
  annotations: Record<string, Buffer>;
}

/** DecryptRequest. */
export interface KmsDecryptRequest {
  ciphertext: Buffer;
  uid: string;
  key_id: string;
  annotations: Record<string, Buffer>;
}

type Unary<Req, Res> = (req: Req, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Res) => void) => void;

/** The gRPC client as grpc-js builds it from the definition. */
interface RawClient extends grpc.Client {
  Status: Unary<Record<string, never>, KmsStatus>;
  Encrypt: Unary<{ plaintext: Buffer; uid: string }, KmsEncryptResponse>;
  Decrypt: Unary<KmsDecryptRequest, { plaintext: Buffer }>;
}

const Client = grpc.makeGenericClientConstructor(KMS_V2_SERVICE, 'KeyManagementService');

/** One finished call, for the latency metric: method, gRPC status code name, seconds. */
export type KmsCallObserver = (method: 'Status' | 'Encrypt' | 'Decrypt', code: string, seconds: number) => void;

/**
 * A KMS v2 plugin over gRPC on a unix socket (`unix:///path`). Each call
 * has the provider's timeout as its deadline; the channel reconnects by
 * itself when the plugin comes back. Rejects with the gRPC error.
 */
export class KmsV2Client {
  private readonly client: RawClient;

  constructor(
    endpoint: string,
    private readonly timeoutMs: number,
    private readonly observe: KmsCallObserver = () => undefined,
  ) {
    // grpc-js takes `unix:///abs/path` as it is; a quick reconnect after the plugin restarts.
    this.client = new Client(endpoint, grpc.credentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
    }) as unknown as RawClient;
  }

  /** The plugin's Status (healthz, version, current key_id). */
  status(): Promise<KmsStatus> {
    return this.call('Status', (o, cb) => this.client.Status({}, o, cb));
  }

  /** Wraps `plaintext` (a data-key seed) with the plugin's current key. */
  encrypt(plaintext: Buffer, uid: string): Promise<KmsEncryptResponse> {
    return this.call('Encrypt', (o, cb) => this.client.Encrypt({ plaintext, uid }, o, cb));
  }

  /** Unwraps what Encrypt returned, with its key_id and annotations. */
  async decrypt(req: KmsDecryptRequest): Promise<Buffer> {
    const response = await this.call<{ plaintext: Buffer }>('Decrypt', (o, cb) => this.client.Decrypt(req, o, cb));
    return response.plaintext;
  }

  /** Closes the channel. */
  close(): void {
    this.client.close();
  }

  private call<T>(method: 'Status' | 'Encrypt' | 'Decrypt', run: (o: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: T) => void) => void): Promise<T> {
    const started = process.hrtime.bigint();
    return new Promise<T>((resolve, reject) => {
      run({ deadline: Date.now() + this.timeoutMs }, (err, res) => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        this.observe(method, err ? (grpc.status[err.code] ?? 'Unknown') : 'OK', seconds);
        if (err) reject(err);
        else resolve(res);
      });
    });
  }
}
