// inventory.mjs: the inventory as a newcomer fills it: a site whose slug follows its
// name, a platform whose driver is one of the server's, a device onboarded in one form,
// and an edit among more addresses than any select could load.

import { BASE, ADMIN_PASSWORD, page, step, check, api, shot, nav, pick, login } from './lib.mjs';

/** inventory runs the inventory scenarios as admin, at a desktop width. */
export async function inventory() {
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.goto(`${BASE}/ui/`);
  await page.locator('#logout').click();
  await page.waitForURL(/\/ui\/login/);
  await login('admin', ADMIN_PASSWORD);

  step('a site: its slug fills from the name');
  await nav('Sites');
  await page.getByRole('link', { name: 'New site' }).click();
  const siteForm = page.locator('form.form');
  await siteForm.locator('[name=name]').fill('Paris Nord 2');
  check(await siteForm.locator('[name=slug]').inputValue() === 'paris-nord-2', `slug ${await siteForm.locator('[name=slug]').inputValue()}`);
  await siteForm.getByRole('button', { name: 'Create site' }).click();
  await page.getByRole('heading', { name: 'Site: Paris Nord 2' }).waitFor();

  step('a platform: the driver is chosen from the server\'s list');
  await nav('Platforms');
  await page.getByRole('link', { name: 'New platform' }).click();
  await page.locator('form.form select[name=driver]').waitFor();
  const drivers = await page.locator('form.form select[name=driver] option').evaluateAll((os) => os.map((o) => o.value));
  check(drivers.includes('cisco_ios') && drivers.includes('juniper_junos') && drivers.includes(''), `driver options ${drivers}`);

  step('one form onboards a device: management IP and SSH port, no interface or address forms');
  await nav('Devices');
  await page.getByRole('link', { name: 'New device' }).click();
  const devForm = page.locator('form.form');
  check(await devForm.locator('.picker[data-name=primary_ip4]').count() === 0, 'no primary IP choice before the device exists');
  await devForm.locator('[name=name]').fill('e2e-edge-1');
  await pick(devForm, 'site', 'paris', 'Paris Nord 2');
  await pick(devForm, 'platform', 'ios', 'Cisco IOS');
  await devForm.locator('[name=mgmt_ip]').fill('192.0.2.41/24');
  await devForm.locator('[name=ssh_port]').fill('2201');
  await shot('13-device-onboarding');
  await devForm.getByRole('button', { name: 'Create device' }).click();
  await page.waitForURL(/\/ui\/devices\/\d+$/);
  const edgeID = Number(page.url().split('/').pop());
  const edge = await api('GET', `/api/dcim/devices/${edgeID}/`);
  check(edge.primary_ip4 && edge.primary_ip4.address === '192.0.2.41/24' && edge.custom_fields.ssh_port === 2201 && edge.site.slug === 'paris-nord-2',
    `onboarded device: ${JSON.stringify(edge)}`);
  const edgeIfs = await api('GET', `/api/dcim/interfaces/?device_id=${edgeID}`);
  check(edgeIfs.count === 1 && edgeIfs.results[0].name === 'mgmt0', `interfaces: ${JSON.stringify(edgeIfs.results)}`);

  step('editing a device among 5,000 addresses keeps its primary IP and sends only what changed');
  for (let b = 0; b < 5; b++) {
    await api('POST', '/api/ipam/ip-addresses/', Array.from({ length: 1000 }, (_, i) => ({ address: `10.${100 + b}.${i >> 8}.${i & 255}/16` })));
  }
  const far = await api('POST', '/api/dcim/devices/', { name: 'e2e-far', site: { slug: 'paris-nord-2' }, mgmt_ip: '10.250.0.9/24' });
  check((await api('GET', '/api/ipam/ip-addresses/?limit=1')).count > 5000, 'more than 5,000 addresses');
  const sent = [];
  const asked = []; // the address lists the page asked for while editing
  const watch = (req) => {
    if (req.method() === 'PATCH' && req.url().includes(`/api/dcim/devices/${far.id}/`)) sent.push(req.postDataJSON());
    if (req.method() === 'GET' && new URL(req.url()).pathname === '/api/ipam/ip-addresses/') asked.push(new URL(req.url()).searchParams);
  };
  page.on('request', watch);
  await page.goto(`${BASE}/ui/devices/${far.id}/edit`);
  const farForm = page.locator('form.form');
  const ipBox = farForm.locator('.picker[data-name=primary_ip4] [role=combobox]');
  await ipBox.waitFor();
  check((await ipBox.inputValue()).startsWith('10.250.0.9/24'), `the primary IP shows: ${await ipBox.inputValue()}`);
  await ipBox.click();
  await ipBox.fill('10.250');
  await farForm.getByRole('option', { name: '10.250.0.9/24 — e2e-far · mgmt0' }).waitFor();
  await ipBox.press('Escape');
  check(asked.some((q) => q.get('q') === '10.250'), `the select searched the server for what was typed: ${asked.map(String)}`);
  check(asked.every((q) => Number(q.get('limit')) > 0 && Number(q.get('limit')) <= 50),
    `every address request is one small page, none loads them all: ${asked.map(String)}`);
  await farForm.locator('[name=description]').fill('edited among many addresses');
  await shot('14-device-edit-many-ips');
  await farForm.getByRole('button', { name: 'Save' }).click();
  await page.waitForURL(new RegExp(`/ui/devices/${far.id}$`));
  const after = await api('GET', `/api/dcim/devices/${far.id}/`);
  check(after.primary_ip4 && after.primary_ip4.id === far.primary_ip4.id && after.description === 'edited among many addresses',
    `after the edit: ${JSON.stringify(after.primary_ip4)} ${after.description}`);
  check(sent.length === 1 && JSON.stringify(Object.keys(sent[0])) === '["description"]', `the form sent ${JSON.stringify(sent)}`);
  page.off('request', watch);

  step('a status reads in one colour on the device page and in the list');
  await api('PATCH', `/api/dcim/devices/${far.id}/`, { status: 'offline' });
  await page.goto(`${BASE}/ui/devices/${far.id}`);
  await page.locator('dd .badge.bad', { hasText: 'Offline' }).waitFor();
  await page.goto(`${BASE}/ui/devices/?q=${far.name}`);
  await page.locator('td .badge.bad', { hasText: 'Offline' }).waitFor();
  await api('PATCH', `/api/dcim/devices/${far.id}/`, { status: 'active' });

  step('import: a preview names each problem by row and column; a good file imports');
  await nav('Import');
  await page.getByRole('heading', { name: 'Import' }).waitFor();
  await page.locator('#imp-type').selectOption('devices');
  await page.locator('#imp-text').fill('name,site,mgmt_ip,ssh_port\ne2e-imp-1,Paris Nord 2,192.0.2.51/24,22\ne2e-imp-2,Atlantis,192.0.2.52/24,99999\n');
  await page.getByRole('button', { name: 'Preview' }).click();
  const probs = page.locator('.import-result tbody tr');
  await probs.first().waitFor();
  const probText = await page.locator('.import-result').textContent();
  check(probText.includes('Nothing was imported: 2 problems') && probText.includes('devices row 3') && probText.includes('Atlantis') && probText.includes('ssh_port'),
    `the problems: ${probText}`);
  check(await page.getByRole('button', { name: 'Import', exact: true }).isDisabled(), 'no import of a refused file');
  await shot('15-import-problems');
  await page.locator('#imp-text').fill('name,site,mgmt_ip,ssh_port,role\ne2e-imp-1,Paris Nord 2,192.0.2.51/24,22,router\ne2e-imp-2,paris-nord-2,192.0.2.52/24,2222,switch\n');
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.locator('.import-result h2', { hasText: 'Preview' }).waitFor();
  const prev = await page.locator('.import-result').textContent();
  check(prev.includes('2 would be created') && prev.includes('role'), `the preview: ${prev}`);
  check((await api('GET', '/api/dcim/devices/?name=e2e-imp-1')).count === 0, 'a preview writes nothing');
  await shot('16-import-preview');
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.locator('.import-result h2', { hasText: 'Imported' }).waitFor();
  const imported = await api('GET', '/api/dcim/devices/?name=e2e-imp-2');
  check(imported.count === 1 && imported.results[0].ssh_port === 2222 && imported.results[0].mgmt_ip === '192.0.2.52/24', `imported: ${JSON.stringify(imported.results)}`);

  step('sync from NetBox: the button on the device list runs it and shows what it did');
  await nav('Devices');
  const syncBtn = page.getByRole('button', { name: 'Sync from NetBox' });
  await syncBtn.click();
  await page.locator('.toast', { hasText: /Synced from NetBox: 2 devices \(2 new/ }).waitFor({ timeout: 30000 });
  const synced = await api('GET', '/api/dcim/devices/?netbox_id__isnull=false');
  check(synced.count === 2 && synced.results.every((d) => d.site.slug === 'lyon-2'), `synced devices: ${JSON.stringify(synced.results.map((d) => d.name))}`);
  await page.locator('tbody tr', { hasText: 'lyo-edge-1' }).waitFor();
  await shot('17-devices-synced');
  await page.goto(`${BASE}/ui/devices/${synced.results[0].id}/edit`);
  await page.locator('form.form [name=description]').fill('edited here');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.locator('.msg.error', { hasText: 'comes from NetBox' }).waitFor();
  await nav('Import');
  await page.locator('section.card h2', { hasText: 'From NetBox' }).waitFor();
  check((await page.locator('section.card', { hasText: 'From NetBox' }).textContent()).includes('done'), 'the Import page shows the last sync');
  await shot('18-import-netbox');
}
