// run.mjs drives chromium through playwright-core against a running `fieldkit serve
// --demo` (started by ui/e2e_test.go, which passes everything in FK_* variables). Each
// step prints its name; the first failed assertion ends the run with exit status 1.

import { join } from 'node:path';
import { ctx, SHOTS, t0, state, step, check, shot, pageErrors } from './lib.mjs';
import { workflow } from './workflow.mjs';
import { firstRun } from './firstrun.mjs';
import { finding } from './finding.mjs';
import { liveRuns } from './runs.mjs';
import { confirmAndSets } from './confirm.mjs';
import { layoutSweep } from './layout.mjs';
import { inventory } from './inventory.mjs';
import { changes, backups } from './changes.mjs';
import { hub } from './hub.mjs';
import { automation } from './automation.mjs';
import { secondDay } from './secondday.mjs';
import { notes } from './notes.mjs';

// FK_SCENARIOS=notes,changes runs those scenarios alone, in that order: one being
// written is tried without the others' eight minutes. A scenario that builds on what
// an earlier one made needs that one named before it.
const only = (process.env.FK_SCENARIOS || '').split(',').filter(Boolean);

async function scenarios() {
  if (only.length) {
    const all = { workflow, inventory, firstRun, finding, liveRuns, confirmAndSets, changes, backups, hub, automation, secondDay, notes };
    for (const name of only) {
      check(all[name], `FK_SCENARIOS names an unknown scenario: ${name}`);
      await all[name]();
    }
    return;
  }
  await workflow();
  await inventory();
  await firstRun();
  await finding();
  await liveRuns();
  await confirmAndSets();
  await changes();
  await backups();
  await hub();
  await automation();
  await secondDay();
  await notes();
  await layoutSweep();
  check(pageErrors.length === 0, `page errors: ${pageErrors.join('; ')}`);
}

let failed = false;
try {
  await scenarios();
  step(`all scenarios passed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
} catch (err) {
  failed = true;
  console.error(`FAILED in step "${state.current}": ${err.message}`);
  if (pageErrors.length) console.error(`errors in the page: ${pageErrors.join('; ')}`);
  try { await shot('failure'); console.error(`screenshot: ${join(SHOTS, 'failure.png')}`); } catch { /* the page may be gone */ }
} finally {
  await ctx.close();
}
process.exit(failed ? 1 : 0);
