/**
 * Where checkpoints are mirrored and how to authenticate there. The token is
 * only ever read from the environment and handed to isomorphic-git's
 * `onAuth`; it is never part of a URL, a file or a message.
 */
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AuthCallback, AuthFailureCallback, GitAuth, HttpClient } from 'isomorphic-git';

/** isomorphic-git's network `http` plugin, loaded on the first request (a `serve` without a mirror never loads it). */
const networkHttp: HttpClient = {
  request: async (request) => (await import('isomorphic-git/http/node')).default.request(request),
};

/** The plugin serving a bare repository on a local path, loaded on the first request. */
function localHttp(dir: string): HttpClient {
  return {
    request: async (request) => {
      const { localTransport } = await import('./local-mirror.js');
      return localTransport(dir).request(request);
    },
  };
}

/** Environment variable naming the mirror when `--mirror` is not given. */
export const MIRROR_ENV = 'CHANGESET_SERVER_MIRROR';
/** Environment variable holding the token sent to the mirror. */
const MIRROR_TOKEN_ENV = 'CHANGESET_SERVER_MIRROR_TOKEN';
/** User name sent with the token in HTTP basic authentication. */
const MIRROR_USER_ENV = 'CHANGESET_SERVER_MIRROR_USER';
/** `basic` (default) or `bearer`: how the token is sent. */
const MIRROR_AUTH_ENV = 'CHANGESET_SERVER_MIRROR_AUTH';

/** GitHub's convention; GitLab, Gitea and others accept any user name with a token. */
const DEFAULT_USER = 'x-access-token';

/** A mistake in the mirror settings (exit code 2 on the command line). */
export class MirrorSettingsError extends Error {}

/** A git remote reachable over smart HTTP, or a bare repository on a local path, and how to log in. */
export interface MirrorRemote {
  /** The repository URL, without credentials, or the bare repository's absolute path: what messages show. */
  url: string;
  /** The URL handed to isomorphic-git with {@link http}. */
  transportUrl: string;
  /** isomorphic-git's `http` plugin: the network's, or one serving the local bare repository. */
  http: HttpClient;
  /** The bare repository's absolute path, for a mirror on a local path or `file://` URL. */
  localDir?: string;
  /** Answers the host's 401 with the token (undefined without one). */
  onAuth: AuthCallback;
  /** Gives up after the host refused the token once, instead of asking again. */
  onAuthFailure: AuthFailureCallback;
  /** The token as a request header, for requests isomorphic-git's discovery does not make. */
  authHeaders(): Record<string, string>;
  /** Replaces the token wherever it might appear in text meant for people. */
  redact(text: string): string;
}

/** Checks a mirror URL: http or https, and no credentials in it (they would end up in logs and files). */
function parseMirrorUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new MirrorSettingsError(`mirror URL ${JSON.stringify(text)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new MirrorSettingsError(`mirror URL must be http:// or https:// (smart HTTP), file:// or a path of a bare repository, got ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new MirrorSettingsError(`mirror URL must not contain credentials: put the token in ${MIRROR_TOKEN_ENV}`);
  }
  // isomorphic-git appends `/info/refs` to the URL as given.
  return url.href.replace(/\/+$/, '');
}

/** The absolute path a mirror setting names (`/abs`, `./rel`, `file:///abs`), or undefined for a URL of another scheme. */
function localMirrorPath(text: string, cwd: string): string | undefined {
  if (/^file:/i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new MirrorSettingsError(`mirror URL ${JSON.stringify(text)} is not a URL`);
    }
    if (url.host !== '') throw new MirrorSettingsError(`a file:// mirror must be on this machine (file:///path), not on host ${url.host}`);
    return fileURLToPath(url).replace(/\/+$/, '') || '/';
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(text)) return undefined;
  if (text === '') throw new MirrorSettingsError('the mirror setting is empty');
  return (isAbsolute(text) ? resolve(text) : resolve(cwd, text)).replace(/\/+$/, '') || '/';
}

/** The remote for a URL or local path, with the token, user name and scheme from the environment. */
export function mirrorRemote(urlText: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): MirrorRemote {
  const localDir = localMirrorPath(urlText, cwd);
  if (localDir !== undefined) {
    return {
      url: localDir,
      transportUrl: `http://local-mirror.invalid/${encodeURIComponent(localDir)}`,
      http: localHttp(localDir),
      localDir,
      onAuth: () => undefined,
      onAuthFailure: () => ({ cancel: true }),
      authHeaders: () => ({}),
      redact: (text) => text,
    };
  }
  const url = parseMirrorUrl(urlText);
  const token = env[MIRROR_TOKEN_ENV] || undefined;
  const scheme = (env[MIRROR_AUTH_ENV] || 'basic').toLowerCase();
  if (scheme !== 'basic' && scheme !== 'bearer') throw new MirrorSettingsError(`${MIRROR_AUTH_ENV} must be basic or bearer, got ${JSON.stringify(scheme)}`);
  const username = env[MIRROR_USER_ENV] || DEFAULT_USER;
  const auth = (): GitAuth | undefined => {
    if (token === undefined) return undefined;
    return scheme === 'bearer' ? { headers: { Authorization: `Bearer ${token}` } } : { username, password: token };
  };
  return {
    url,
    transportUrl: url,
    http: networkHttp,
    onAuth: () => auth(),
    onAuthFailure: () => ({ cancel: true }),
    authHeaders: () => {
      const given = auth();
      if (!given) return {};
      if (given.headers) return given.headers;
      return { Authorization: `Basic ${Buffer.from(`${given.username}:${given.password}`).toString('base64')}` };
    },
    redact: (text) => (token === undefined ? text : text.split(token).join('***')),
  };
}

/** What went wrong talking to the remote, in a line for people (isomorphic-git's own messages run long). */
export function describeRemoteError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  if (code === 'UserCanceledError') return 'the remote refused the token (HTTP 401)';
  if (code === 'HttpError') {
    const data = (error as { data?: { statusCode?: number; statusMessage?: string } }).data;
    if (data?.statusCode === 401) return 'the remote asks for a token (HTTP 401): set CHANGESET_SERVER_MIRROR_TOKEN';
    if (data?.statusCode) return `HTTP ${data.statusCode} ${data.statusMessage ?? ''}`.trim();
  }
  return error.message.split('\n')[0]!.slice(0, 300);
}
