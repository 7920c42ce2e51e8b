import { expect } from 'chai';
import type { TestService } from './service.ts';
import type { signUp } from './users.ts';

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export type User = Awaited<ReturnType<typeof signUp>>;

/** The super admin's address in these tests (passed as ADMIN_EMAILS). */
export const ROOT_EMAIL = 'root.communities@example.com';

/**
 * A community made by the super admin, with `admin` named its community admin and, when given,
 * members joined with an invite code. Returns the ids and the first circle.
 */
export async function communityWith(svc: TestService, root: User, admin: User, members: User[] = [], name = 'Founders') {
  const created = await svc.req('POST', '/api/admin/communities', { headers: bearer(root.access_token), body: { name, description: `${name} circle` } });
  expect(created.status, created.text).to.equal(201);
  const community_id = created.body.community_id as string;
  const circle_id = created.body.circles[0].circle_id as string;
  const named = await svc.req('POST', `/api/admin/communities/${community_id}/admins`, {
    headers: bearer(root.access_token),
    body: { user_id: admin.user_id },
  });
  expect(named.status, named.text).to.equal(200);
  let code = '';
  if (members.length) {
    const c = await svc.req('POST', '/api/admin/community-admin/codes', { headers: bearer(admin.access_token), body: { community_id, label: 'test' } });
    expect(c.status, c.text).to.equal(201);
    code = c.body.code;
    for (const m of members) {
      const j = await svc.req('POST', '/api/communities/join', { headers: bearer(m.access_token), body: { code } });
      expect(j.status, j.text).to.equal(200);
    }
  }
  return { community_id, circle_id, code };
}
