import { Decrypter, Encrypter } from 'age-encryption';
import { AGE_X25519, checkObject, describe, type SnapshotHeader, type SnapshotRecord, SnapshotFormatError } from './snapshot-format.js';

/** The storage resource of Secrets (core group): the records a snapshot seals. */
export const SECRETS_RESOURCE = 'secrets';

/** A recipient that is not an age X25519 public key (`age1…`). */
export class RecipientError extends Error {}

/**
 * Checks `recipients` (age X25519 public keys, `age1…`) and returns a
 * sealer of record bodies to all of them: each body's JSON becomes one age
 * file (a fresh file key per record, wrapped to every recipient), base64.
 * Throws RecipientError naming a recipient that is not such a key.
 */
export function secretSealer(recipients: string[]): (body: Record<string, unknown>) => Promise<string> {
  const encrypter = new Encrypter();
  for (const r of recipients) {
    if (!/^age1[02-9ac-hj-np-z]{58}$/.test(r)) throw new RecipientError(`recipient ${JSON.stringify(r)} is not an age X25519 public key (age1…)`);
    try {
      encrypter.addRecipient(r);
    } catch (err) {
      throw new RecipientError(`recipient ${JSON.stringify(r)} is not an age X25519 public key: ${(err as Error).message}`);
    }
  }
  return async (body) => Buffer.from(await encrypter.encrypt(JSON.stringify(body))).toString('base64');
}

/**
 * Opens every sealed record of a parsed snapshot with `identities` (age
 * secret keys, `AGE-SECRET-KEY-1…`): the records get their object back and
 * the header says Secrets are in the clear. Mutates `records` and returns
 * the header to write with them. Throws SnapshotFormatError when a record
 * cannot be opened with any of the identities, or opens to something that
 * is not its object.
 */
export async function openSealed(header: SnapshotHeader, records: SnapshotRecord[], identities: string[]): Promise<SnapshotHeader> {
  const sealed = records.filter((r) => r.sealed !== undefined);
  if (sealed.length === 0) return { ...header, secrets: { scheme: 'none' } };
  if (header.secrets.scheme !== AGE_X25519) throw new SnapshotFormatError('the snapshot has sealed records but names no scheme for them');
  if (identities.length === 0) {
    throw new SnapshotFormatError(`the snapshot's ${sealed.length} Secrets are sealed to ${header.secrets.recipients.join(', ')}: give an identity (age secret key) of one of them`);
  }
  const decrypter = new Decrypter();
  for (const id of identities) decrypter.addIdentity(id);
  for (const r of sealed) {
    let text: string;
    try {
      text = await decrypter.decrypt(Buffer.from(r.sealed!, 'base64'), 'text');
    } catch (err) {
      throw new SnapshotFormatError(`cannot open ${describe(r)} with the identity given (${(err as Error).message}); it is sealed to ${header.secrets.recipients.join(', ')}`);
    }
    let object: unknown;
    try {
      object = JSON.parse(text);
    } catch {
      throw new SnapshotFormatError(`${describe(r)} opens to something that is not JSON: the snapshot is damaged`);
    }
    checkObject(object, r, 'sealed record');
    r.object = object as Record<string, unknown>;
    delete r.sealed;
  }
  return { ...header, secrets: { scheme: 'none' } };
}

/** The age identities (lines `AGE-SECRET-KEY-1…`) in the text of an identity file; comments and blank lines skipped. */
export function identitiesIn(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.startsWith('AGE-SECRET-KEY-'));
}
