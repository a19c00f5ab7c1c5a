#!/usr/bin/env node
// Checks the public API of every public package against its checked-in API Extractor report
// (`<package>/etc/<name>.api.md`, one per entry point of its `exports`), read from the built
// declarations (dist/*.d.ts). `--update` rewrites the reports instead: run it (`npm run api:update`)
// when a change of the public API is meant, and commit the reports with it. A check that passed is
// remembered (node_modules/.cache/api-report) until a declaration, a report or this script changes.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { PUBLIC_PACKAGES } from './public-packages.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const QUIET = new Set(['none', 'info', 'verbose']);

/** The entry points of a package with declarations: `.` and subpaths such as `./testing`. */
function entryPoints(folder) {
  const manifest = JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8'));
  const unscoped = manifest.name.replace(/^@[^/]+\//, '');
  return Object.entries(manifest.exports ?? {})
    .filter(([, target]) => typeof target === 'object' && target.types)
    .map(([subpath, target]) => ({
      packageJson: join(root, folder, 'package.json'),
      declarations: join(root, folder, target.types),
      report: subpath === '.' ? `${unscoped}.api.md` : `${unscoped}-${subpath.slice(2).replaceAll('/', '-')}.api.md`,
    }));
}

/**
 * Reports every entry point of `folders`; answers the reports that differ from the ones in each
 * folder's `etc/` (or `reportFolderOf(folder)`), which `update` rewrites.
 */
export function checkApiReports({ update = false, folders = PUBLIC_PACKAGES, reportFolderOf = (folder) => join(root, folder, 'etc') } = {}) {
  const temp = mkdtempSync(join(tmpdir(), 'mesh-api-report-'));
  const changed = [];
  try {
    for (const folder of folders) {
      if (update) mkdirSync(reportFolderOf(folder), { recursive: true });
      for (const entry of entryPoints(folder)) {
        const config = ExtractorConfig.prepare({
          configObject: {
            projectFolder: join(root, folder),
            newlineKind: 'lf',
            mainEntryPointFilePath: entry.declarations,
            compiler: {
              overrideTsconfig: {
                compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022'], types: ['node'], strict: true, skipLibCheck: true },
                files: [entry.declarations],
              },
            },
            apiReport: { enabled: true, reportFolder: reportFolderOf(folder), reportTempFolder: temp, reportFileName: entry.report },
            docModel: { enabled: false },
            dtsRollup: { enabled: false },
            tsdocMetadata: { enabled: false },
            messages: {
              compilerMessageReporting: { default: { logLevel: 'warning' } },
              // The report records the API; release tags, TSDoc syntax and types reached but not
              // exported under their own name are not what it keeps, so they are not reported.
              extractorMessageReporting: {
                default: { logLevel: 'warning' },
                'ae-missing-release-tag': { logLevel: 'none' },
                'ae-undocumented': { logLevel: 'none' },
                'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: false },
                'ae-wrong-input-file-type': { logLevel: 'none' },
              },
              tsdocMessageReporting: { default: { logLevel: 'none' } },
            },
          },
          configObjectFullPath: undefined,
          packageJsonFullPath: entry.packageJson,
        });
        const result = Extractor.invoke(config, { localBuild: update, messageCallback: (message) => (message.handled = QUIET.has(message.logLevel)) });
        if (result.apiReportChanged) changed.push(join(reportFolderOf(folder), entry.report));
      }
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return changed;
}

const cacheFile = join(root, 'node_modules/.cache/api-report/passed.sha256');

/** What a check reads: the script, the manifests, the built declarations and the reports. */
function inputsHash() {
  const hash = createHash('sha256');
  const add = (file) => hash.update(file).update('\0').update(readFileSync(file)).update('\0');
  add(fileURLToPath(import.meta.url));
  add(join(root, 'scripts/public-packages.mjs'));
  for (const folder of PUBLIC_PACKAGES) {
    add(join(root, folder, 'package.json'));
    for (const sub of ['dist', 'etc']) {
      const directory = join(root, folder, sub);
      if (!existsSync(directory)) continue;
      for (const file of readdirSync(directory, { recursive: true }).map(String).sort()) {
        if (file.endsWith('.d.ts') || file.endsWith('.api.md')) add(join(directory, file));
      }
    }
  }
  return hash.digest('hex');
}

/** The check of `npm test` and `npm run api:check`: true when every report is up to date. */
export function apiReportsUpToDate() {
  const inputs = inputsHash();
  if (existsSync(cacheFile) && readFileSync(cacheFile, 'utf8') === inputs) return true;
  const changed = checkApiReports();
  if (changed.length > 0) {
    console.error(`The public API changed without its report: ${changed.map((file) => relative(root, file)).join(', ')}.\nIf the change is meant, run npm run api:update and commit the reports.`);
    return false;
  }
  mkdirSync(dirname(cacheFile), { recursive: true });
  writeFileSync(cacheFile, inputs);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--update')) {
    const changed = checkApiReports({ update: true });
    console.log(changed.length > 0 ? `API reports updated: ${changed.map((file) => relative(root, file)).join(', ')}` : 'API reports unchanged');
  } else if (!apiReportsUpToDate()) {
    process.exit(1);
  }
}
