import { type FenceState, survivesPrimaryLoss } from '@plinth/storage';

/** Whether a write acknowledged now survives the loss of the shard's primary, and why. */
export interface ShardDurability {
  survivesPrimaryLoss: boolean;
  message: string;
}

/** What a fence check's state promises of acknowledged writes (shown in `kubectl get shards -o wide`, a condition and /readyz?verbose). Pure. */
export function durabilityOf(state: FenceState): ShardDurability {
  const safe = survivesPrimaryLoss(state);
  const standbys = state.synchronousStandbys === 0 ? 'no standby streaming: writes wait for one' : `${state.synchronousStandbys} synchronous standby${state.synchronousStandbys > 1 ? 's' : ''}`;
  return {
    survivesPrimaryLoss: safe,
    message: safe
      ? `acknowledged writes survive the loss of the primary (synchronous_standby_names '${state.synchronousStandbyNames ?? ''}', ${standbys}, synchronous_commit=${state.synchronousCommit})`
      : `acknowledged writes may be lost with the primary (${state.synchronousStandbyNames?.trim() === '' ? 'synchronous_standby_names is empty: the primary acknowledges alone' : `synchronous_commit=${state.synchronousCommit}`}); revisions are never reused`,
  };
}
