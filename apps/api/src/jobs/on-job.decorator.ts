import { SetMetadata } from '@nestjs/common';
import type { JobName } from './job-names.js';

/** Metadata key of {@link OnJob}. */
export const ON_JOB = Symbol('plinth:on-job');

/** Marks a provider method as the handler of `name` (one handler per job; checked at start-up). */
export const OnJob = (name: JobName): MethodDecorator => SetMetadata(ON_JOB, name);
