import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { JobName, type JobPayloads } from './job-names.js';
import { ON_JOB } from './on-job.decorator.js';

type Handler = (payload: unknown) => Promise<unknown> | unknown;

/**
 * The handler of every job, found on the providers' `@OnJob` methods when
 * the module starts. A job of {@link JobName} without a handler, or with
 * two, fails start-up (as immich checks its job handlers).
 */
@Injectable()
export class JobHandlers implements OnModuleInit {
  private readonly handlers = new Map<JobName, Handler>();

  constructor(
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const found = new Map<JobName, string[]>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const proto = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(proto)) {
        const fn = instance[method];
        if (typeof fn !== 'function') continue;
        const name = this.reflector.get<JobName | undefined>(ON_JOB, fn as () => unknown);
        if (!name) continue;
        found.set(name, [...(found.get(name) ?? []), `${wrapper.name}.${method}`]);
        this.handlers.set(name, (payload) => (fn as Handler).call(instance, payload));
      }
    }
    assertOneHandlerEach(found);
  }

  /** Runs the handler of `name` with `payload`. */
  async run<N extends JobName>(name: N, payload: JobPayloads[N]): Promise<unknown> {
    const handler = this.handlers.get(name);
    if (!handler) throw new Error(`no handler for job ${name}`);
    return handler(payload);
  }
}

/** Throws unless every job has exactly one handler and every handler names a known job. */
export function assertOneHandlerEach(found: Map<string, string[]>): void {
  const known = new Set<string>(Object.values(JobName));
  const problems: string[] = [];
  for (const name of known) {
    const where = found.get(name) ?? [];
    if (where.length === 0) problems.push(`job ${name} has no handler`);
    if (where.length > 1) problems.push(`job ${name} has ${where.length} handlers: ${where.join(', ')}`);
  }
  for (const name of found.keys()) if (!known.has(name)) problems.push(`handler for unknown job ${name}`);
  if (problems.length > 0) throw new Error(`jobs: ${problems.join('; ')}`);
}
