// backups.js: each device's last good config backup against its age limit, never
// backed up first, then the oldest (GET /api/plugins/toolkit/backup-health/).

import { h, link, statusBadge, fmtAgo } from './dom.js';
import { T } from './api.js';
import { route } from './router.js';
import { listPage, emptyState } from './list.js';

function span(sec) {
  if (sec == null) return '—';
  if (sec >= 86400) return `${(sec / 86400).toFixed(1)} d`;
  if (sec >= 3600) return `${(sec / 3600).toFixed(1)} h`;
  return `${Math.round(sec / 60)} min`;
}

async function healthView(main) {
  const page = await listPage(main, {
    title: 'Backup health', path: `${T}/backup-health/`,
    filters: [{ name: 'site_id', label: 'Site', type: 'ref', ref: { path: '/api/dcim/sites/' } },
      { name: 'status', label: 'Status', type: 'select', options: [['stale', 'stale'], ['never', 'never backed up'], ['ok', 'ok']] }],
    columns: [
      { label: 'Device', cell: (b) => link(`/ui/devices/${b.device.id}`, b.device.name) },
      { label: 'Site', cell: (b) => b.site.name },
      { label: 'Status', cell: (b) => statusBadge(b.status, b.status === 'never' ? 'never backed up' : '') },
      { label: 'Last good backup', cell: (b) => (b.last_good ? fmtAgo(b.last_good) : '—') },
      { label: 'Age', cell: (b) => span(b.age_seconds) },
      { label: 'Limit', cell: (b) => h('span', { title: b.limit_from === 'site' ? "the site's backup_max_age_hours" : 'config_backup.max_age' }, span(b.limit_seconds)) },
    ],
    empty: emptyState('No active device yet: the devices, their last good backup and its age show here.', link('/ui/devices/', 'Devices', { class: 'btn' })),
  });
  if (page && page.summary) {
    const s = page.summary;
    main.querySelector('.page-head').after(h('p', { class: 'muted', id: 'backup-summary' },
      `${s.ok} within their limit, ${s.stale} stale, ${s.never} never backed up. A config backup schedule (Automation → Schedules) keeps them fresh.`));
  }
}

export function registerBackups() {
  route('/ui/backup-health', healthView);
}
