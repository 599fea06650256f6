// session.js: who is logged in and which actions they hold (a hint for showing
// buttons; the server checks every request).

export const session = { user: null, permissions: {}, timeZone: 'UTC', administrators: [], hub: false };

export function setSession(s) {
  session.user = s ? s.user : null;
  session.permissions = (s && s.permissions) || {};
  session.timeZone = (s && s.time_zone) || 'UTC';
  session.administrators = (s && s.administrators) || [];
  session.hub = !!(s && s.hub);
}

/** can reports whether the user holds action on object type (e.g. 'dcim.device', 'add'). */
export function can(type, action) {
  if (!session.user) return false;
  if (session.user.is_superuser) return true;
  return (session.permissions[type] || []).includes(action);
}

export const isSuper = () => !!(session.user && session.user.is_superuser);
