// automation.mjs: work that runs by itself, in the browser. The demo's nightly schedule
// is listed as active; Run now starts a run whose logs say where they came from; a
// service credential set is made with its form and chosen in a new schedule's form.

import { BASE, DEVICE_USER, DEVICE_PASS, page, step, check, api, nav, shot, pick } from './lib.mjs';

async function lastRun(id, since) {
  for (let i = 0; i < 100; i++) {
    const s = await api('GET', `/api/plugins/toolkit/schedules/${id}/`);
    if (s.last_run && s.last_run.finished && s.last_run.started > since) return s.last_run;
    await page.waitForTimeout(200);
  }
  throw new Error(`schedule ${id}: no run recorded`);
}

export async function automation() {
  step('automation: the demo schedule is listed, active');
  await nav('Schedules');
  const row = page.locator('tr', { hasText: 'Nightly version check' });
  await row.waitFor();
  check((await row.textContent()).includes('Active'), 'the demo schedule reads active');

  step('automation: Run now runs it on the demo site; its logs say schedule');
  const sched = (await api('GET', '/api/plugins/toolkit/schedules/?name=Nightly%20version%20check')).results[0];
  const before = sched.last_run ? sched.last_run.started : '';
  await row.getByRole('link', { name: 'Nightly version check' }).click();
  await page.getByRole('button', { name: 'Run now' }).click();
  await page.getByText('started', { exact: false }).first().waitFor();
  const run = await lastRun(sched.id, before);
  // The scenarios before ran many commands on the demo devices: a device over its rate
  // limit is refused, as it would be to a person, and says so.
  check(run.devices === 3 && run.triggered_by === 'admin' && run.successful >= 1 && run.successful + run.rejected.length === 3
    && run.rejected.every((r) => r.reason.includes('rate limit')), `run: ${JSON.stringify(run)}`);
  await page.goto(`${BASE}/ui/logs/?schedule_id=${sched.id}`);
  await page.locator('table tbody tr').first().waitFor();
  check(await page.locator('table tbody tr').count() === run.successful, 'the run logged one execution per device it ran on');
  await shot('automation-schedule-logs');

  step('automation: a service credential set made with its form, chosen in a schedule form');
  await nav('Service credentials');
  await page.getByRole('link', { name: 'New service set' }).click();
  const form = page.locator('form.form');
  await form.locator('[name=name]').fill('e2e service');
  await form.locator('[name=username]').fill(DEVICE_USER);
  await form.locator('[name=password]').fill(DEVICE_PASS);
  await form.locator('[name=password]').press('Enter');
  await page.locator('tr', { hasText: 'e2e service' }).waitFor();
  await nav('Schedules');
  await page.getByRole('link', { name: 'New schedule' }).click();
  const sform = page.locator('form.form');
  await sform.locator('[name=name]').fill('e2e hourly');
  await sform.locator('[name=cron]').fill('@hourly');
  await pick(sform, 'command', 'Show version', 'Show version (Arista EOS, Cisco IOS, Juniper Junos)');
  await pick(sform, 'credential_set', 'e2e', 'e2e service');
  await pick(sform, 'sites', 'Demo', 'Demo Lab');
  await sform.getByRole('button', { name: 'Create schedule' }).click();
  await page.waitForURL(/\/ui\/schedules\/\d+$/);
  const made = (await api('GET', '/api/plugins/toolkit/schedules/?name=e2e%20hourly')).results[0];
  check(made && made.credential_set.name === 'e2e service' && made.status.value === 'active' && made.next_run,
    `the schedule made in the form: ${JSON.stringify(made)}`);
}
