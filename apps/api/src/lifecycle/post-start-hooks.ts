import { Injectable } from '@nestjs/common';

/** A hook run once the server listens, with the URL it advertises to clients (`https://host:port`; PLINTH_ADVERTISE_URL, never 0.0.0.0 or ::). */
export type PostStartHook = (url: string) => Promise<void> | void;

/**
 * kube-apiserver's post-start hooks: work that needs the server listening
 * (its URL, its own API), such as provisioning the configured tenants.
 * Modules register named hooks when they are built; server.ts runs them in
 * registration order right after `listen`, and start-up fails if one throws.
 */
@Injectable()
export class PostStartHooks {
  private readonly hooks: { name: string; run: PostStartHook }[] = [];

  /** Registers `run` under `name` (unique: a second registration fails start-up). */
  add(name: string, run: PostStartHook): void {
    if (this.hooks.some((h) => h.name === name)) throw new Error(`post-start hook "${name}" registered twice`);
    this.hooks.push({ name, run });
  }

  /** Names in run order. */
  names(): string[] {
    return this.hooks.map((h) => h.name);
  }

  /** Runs every hook in order. */
  async run(url: string): Promise<void> {
    for (const h of this.hooks) await h.run(url);
  }
}
