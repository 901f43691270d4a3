import { performance } from 'node:perf_hooks';
import { parseJsonStrict } from './strict-json.js';

/**
 * Micro-benchmark: parseJsonStrict against plain JSON.parse for a ~1 KiB Deployment and a ~1 MiB
 * object, without duplicates (the common case) and with one duplicate key (the full-scan path).
 * Run: `npm run build && node dist/libs/apimachinery/src/decoding/strict-json.bench.js`. Prints timings only.
 */

function deployment(i: number): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `web-${i}`, namespace: 'default', labels: { app: 'web', tier: 'frontend' }, annotations: { 'example.com/note': 'a: b' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'nginx',
              image: 'nginx:1.25.3',
              ports: [{ containerPort: 80, protocol: 'TCP' }],
              env: [{ name: 'MODE', value: 'production' }],
              resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m', memory: '64Mi' } },
            },
          ],
        },
      },
    },
  };
}

function bodyOfSize(bytes: number): string {
  if (bytes <= 2048) return JSON.stringify(deployment(0), null, 2);
  const items: unknown[] = [];
  let text = '';
  for (let i = 0; text.length < bytes; i++) {
    items.push(deployment(i));
    if (i % 50 === 0) text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
  }
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

function medianMs(fn: () => void, iterations: number): number {
  for (let i = 0; i < Math.min(50, iterations); i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

function report(label: string, text: string, iterations: number): void {
  const plain = medianMs(() => JSON.parse(text), iterations);
  const strict = medianMs(() => parseJsonStrict(text), iterations);
  const ratio = (strict / plain).toFixed(2);
  console.log(`${label.padEnd(34)} ${String(text.length).padStart(8)} B  JSON.parse ${plain.toFixed(4)} ms  parseJsonStrict ${strict.toFixed(4)} ms  x${ratio}`);
}

const small = bodyOfSize(1024);
const large = bodyOfSize(1024 * 1024);
report('1 KiB, no duplicates', small, 20000);
report('1 KiB, one duplicate key', small.replace('"replicas": 3', '"replicas": 3, "replicas": 4'), 20000);
report('1 MiB, no duplicates', large, 40);
report('1 MiB, one duplicate key', large.replace('"replicas":3', '"replicas":3,"replicas":4'), 40);
