import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuthorizationAttributes } from '@plinth/apimachinery';
import { ApiError } from '@plinth/apimachinery';
import { impersonate, impersonationHeaders, mastersOnlyAuthorizer } from './impersonation.js';

const admin = { username: 'root', groups: ['system:masters', 'system:authenticated'] };

describe('impersonation', () => {
  it('reads repeated headers as separate values and percent-decodes extra keys', () => {
    const req = impersonationHeaders(['Impersonate-User', 'jane', 'Impersonate-Group', 'a, b', 'Impersonate-Group', 'c', 'Impersonate-Extra-acme.com%2fscope', 'x', 'Host', 'h']);
    assert.deepEqual(req, { user: 'jane', groups: ['a, b', 'c'], extra: { 'acme.com/scope': ['x'] } });
    assert.equal(impersonationHeaders(['Accept', '*/*']), undefined);
  });

  it('refuses groups, uid or extras without a user (400)', () => {
    assert.throws(
      () => impersonationHeaders(['Impersonate-Group', 'g', 'Impersonate-Uid', 'u1']),
      (e: unknown) => e instanceof ApiError && e.code === 400 && e.message === 'requested [group g uid u1] without impersonating a user',
    );
  });

  it('checks every value with verb impersonate and answers the impersonated user', async () => {
    const asked: AuthorizationAttributes[] = [];
    const user = await impersonate(admin, 'acme', { user: 'system:serviceaccount:ns:robot', uid: 'u', groups: ['g'], extra: { k: ['v'] } }, {
      authorize: (a) => (asked.push(a), { allowed: true }),
    });
    assert.deepEqual(
      asked.map((a) => [a.verb, a.apiGroup, a.resource, a.subresource, a.namespace, a.name, a.tenant]),
      [
        ['impersonate', '', 'serviceaccounts', '', 'ns', 'robot', 'acme'],
        ['impersonate', '', 'groups', '', '', 'g', 'acme'],
        ['impersonate', 'authentication.k8s.io', 'uids', '', '', 'u', 'acme'],
        ['impersonate', 'authentication.k8s.io', 'userextras', 'k', '', 'v', 'acme'],
      ],
    );
    assert.deepEqual(user, { username: 'system:serviceaccount:ns:robot', uid: 'u', groups: ['g', 'system:serviceaccounts', 'system:serviceaccounts:ns', 'system:authenticated'], extra: { k: ['v'] } });
  });

  it('denies with upstream\'s 403 message; only system:masters may impersonate without an authorizer', async () => {
    const jane = { username: 'jane', groups: ['system:authenticated'] };
    await assert.rejects(
      impersonate(jane, 'default', { user: 'root', groups: [], extra: {} }, mastersOnlyAuthorizer),
      (e: unknown) => e instanceof ApiError && e.code === 403 && e.message === 'users "root" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const anon = await impersonate(admin, 'default', { user: 'system:anonymous', groups: [], extra: {} }, mastersOnlyAuthorizer);
    assert.deepEqual(anon.groups, ['system:unauthenticated']);
  });

  it('refuses platform groups and the tenant binding to a requester who does not hold them, whatever RBAC allows', async () => {
    const owner = { username: 'system:serviceaccount:default:ci', groups: ['system:serviceaccounts', 'system:authenticated'] };
    const allowAll = { authorize: () => ({ allowed: true }) };
    await assert.rejects(
      impersonate(owner, 'acme', { user: 'mallory', groups: ['system:masters'], extra: {} }, allowAll),
      (e: unknown) =>
        e instanceof ApiError &&
        e.code === 403 &&
        e.message ===
          'groups "system:masters" is forbidden: User "system:serviceaccount:default:ci" cannot impersonate resource "groups" in API group "" at the cluster scope: group "system:masters" belongs to the platform and may be impersonated only by its members',
    );
    await assert.rejects(
      impersonate(owner, 'acme', { user: 'mallory', groups: [], extra: { 'tenancy.plinth.dev/tenant': ['globex'] } }, allowAll),
      (e: unknown) => e instanceof ApiError && e.code === 403 && /userextras\/tenancy\.plinth\.dev\/tenant/.test(e.message),
    );
    const asAdmin = await impersonate(admin, 'acme', { user: 'ops', groups: ['system:masters'], extra: { 'tenancy.plinth.dev/tenant': ['acme'] } }, allowAll);
    assert.deepEqual(asAdmin.groups, ['system:masters', 'system:authenticated']);
    const ordinary = await impersonate(owner, 'acme', { user: 'mallory', groups: ['devs'], extra: {} }, allowAll);
    assert.deepEqual(ordinary.groups, ['devs', 'system:authenticated']);
  });
});
