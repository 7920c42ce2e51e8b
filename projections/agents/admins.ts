import { defineProjection } from '../types.ts';

/** A super admin; `_id` is the lower-cased e-mail. */
export type AdminDoc = {
  _id: string;
  _pos: number;
  email: string;
  granted_at: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    admins: AdminDoc;
  }
}

/** Super admins bootstrapped by the admin CLI (ADMIN_EMAILS adds more at sign-in). */
export const adminsProjection = defineProjection({
  name: 'admins',
  collections: [{ name: 'admins', indexes: [] }],
  handles: ['SuperAdminGranted'],
  async apply(event, ctx) {
    const d = event.data;
    await ctx.collection('admins').applyAt(d.email, event.position, { $set: { email: d.email, granted_at: d.granted_at } });
  },
});
