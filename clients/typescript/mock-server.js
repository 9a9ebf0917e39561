// Builds the agentruns mock from this repository and starts it for the tests.
//
// The file lives outside test/ on purpose: `node --test` runs every .js file
// under a test/ directory as a test file.
//
//   const bin = await buildMock();                       // go build, once per process
//   const mock = await startMock({ bin, args: ['--strict-auth'] });
//   mock.url;                                            // http://127.0.0.1:PORT
//   await mock.stop();                                   // SIGTERM, waits for the exit
//
// Environment:
//   AGENTRUNS_MOCK_BIN  use this prebuilt mock binary instead of building one.
//   GOFLAGS             passed to `go build` as usual.

import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/** The repository root: clients/typescript/../.. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const children = new Set();
let buildDir;
let built;

// Whatever happens to the test process, no mock outlives it.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

/**
 * Builds cmd/agentruns-mock into a temporary folder (once per process) and
 * returns the binary's path.
 */
export function buildMock() {
  built ??= (async () => {
    if (process.env.AGENTRUNS_MOCK_BIN) return path.resolve(process.env.AGENTRUNS_MOCK_BIN);
    if (!existsSync(path.join(repoRoot, 'go.mod'))) {
      throw new Error(`no go.mod in ${repoRoot}: cannot find the repository root`);
    }
    buildDir = mkdtempSync(path.join(tmpdir(), 'agentruns-ts-'));
    const bin = path.join(buildDir, process.platform === 'win32' ? 'agentruns-mock.exe' : 'agentruns-mock');
    try {
      await execFileP('go', ['build', '-o', bin, './cmd/agentruns-mock'], {
        cwd: repoRoot,
        maxBuffer: 16 << 20,
      });
    } catch (err) {
      throw new Error(`go build ./cmd/agentruns-mock failed:\n${err.stderr || err.message}`);
    }
    return bin;
  })();
  return built;
}

// The line the mock logs once it listens, e.g.
// time=... level=WARN msg="agentruns mock listening" url=http://127.0.0.1:41234 clock=real
const listeningLine = /msg="agentruns mock listening".*?\burl=(\S+)/;

/**
 * Starts the mock on a free port and resolves once it listens.
 *
 * @param {{ bin?: string, args?: string[], timeoutMs?: number }} [opts]
 * @returns {Promise<{ url: string, process: import('node:child_process').ChildProcess, stderr: () => string, stop: () => Promise<void> }>}
 */
export async function startMock({ bin, args = [], timeoutMs = 15_000 } = {}) {
  bin ??= await buildMock();
  const child = spawn(bin, ['--addr', '127.0.0.1:0', '--quiet', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let log = '';
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  child.stderr.setEncoding('utf8');

  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the mock did not report its URL within ${timeoutMs} ms; stderr:\n${log}`));
    }, timeoutMs);
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const m = listeningLine.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the mock exited (code ${code}, signal ${signal}) before listening; stderr:\n${log}`));
    });
  });

  return {
    url,
    process: child,
    stderr: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Calls the mock's control API (/__mock/...) with plain fetch, in the
 * isolated session `session` when given.
 */
export async function control(baseURL, method, route, { session, body } = {}) {
  const headers = {};
  if (session) headers['X-Mock-Session'] = session;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(new URL(`/__mock${route}`, baseURL), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /__mock${route}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}
