// The public API check of `npm test` (scripts/api-report.mjs): every public package's declarations
// match its checked-in report; a package whose declarations no longer match fails the check, and an
// update makes them match again.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error -- a script of the repository, in JavaScript without declarations
import { apiReportsUpToDate, checkApiReports } from '../scripts/api-report.mjs';

const root = join(import.meta.dirname, '..');
const folder = 'packages/store-sqlite';
const check = checkApiReports as (options: { update?: boolean; folders: string[]; reportFolderOf: (folder: string) => string }) => string[];

let reports: string | undefined;
afterEach(() => {
  if (reports) rmSync(reports, { recursive: true, force: true });
  reports = undefined;
});

/** A copy of the package's checked-in reports, as `edit` leaves them. */
function reportsEditedBy(edit: (report: string) => string): string {
  reports = mkdtempSync(join(tmpdir(), 'mesh-api-reports-'));
  cpSync(join(root, folder, 'etc'), reports, { recursive: true });
  const report = join(reports, 'store-sqlite.api.md');
  writeFileSync(report, edit(readFileSync(report, 'utf8')));
  return reports;
}

describe('the public API reports', () => {
  it('match every public package, or say which to update with npm run api:update', () => {
    expect((apiReportsUpToDate as () => boolean)()).toBe(true);
  }, 600_000);

  it('are up to date for a package whose API did not change', () => {
    const copy = reportsEditedBy((report) => report);
    expect(check({ folders: [folder], reportFolderOf: () => copy })).toEqual([]);
  });

  it('fail the check when the API has what the report lacks, until the report is updated', () => {
    const copy = reportsEditedBy((report) => {
      const edited = report.replace('    maxSizeBytes?: number;\n', '');
      expect(edited).not.toBe(report);
      return edited;
    });
    expect(check({ folders: [folder], reportFolderOf: () => copy })).toEqual([join(copy, 'store-sqlite.api.md')]);
    check({ update: true, folders: [folder], reportFolderOf: () => copy });
    expect(readFileSync(join(copy, 'store-sqlite.api.md'), 'utf8')).toContain('    maxSizeBytes?: number;\n');
    expect(check({ folders: [folder], reportFolderOf: () => copy })).toEqual([]);
  });
});
