import { isUtf8 } from 'node:buffer';
import { AhpErrorCodes, type ResourceReadParams, type ResourceReadResult } from '../../protocol/index.js';
import { invalidParams, DomainError } from '../domain-error.js';
import { isBinary } from '../diff/file-diff.js';
import { fileUri } from '../file-uri.js';
import { presentFiles, PresentedFileError } from '../session/presented-files.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { PresentedFile } from '../session/turn-record.js';
import type { SessionManager } from '../session/session-manager.js';
import type { ContentProviders, MethodTable } from '../method-table.js';
import { checkPresentFiles } from './params.js';
import { PresentedReadError, readPresentedContent, type PresentedReadOptions } from './presented-content.js';

/** `harness/presentFiles`: records files a turn presents, and answers with the `file:` URIs `resourceRead` serves them under. */
export function presentFilesMethods(sessions: SessionManager): MethodTable {
  return {
    'harness/presentFiles': {
      request: async (params) => {
        const session = sessions.require(params.channel);
        try {
          const files = await presentFiles(session, params.turnId, params.files);
          return { presented: files.map((f) => ({ path: f.path, uri: fileUri(f.path) })) };
        } catch (error) {
          if (error instanceof PresentedFileError) throw invalidParams(`params.files[${error.index}].path: ${error.message}`);
          throw error;
        }
      },
      check: checkPresentFiles,
    },
  };
}

/**
 * `resourceRead` of the `file:` URIs `harness/presentFiles` hands out: only
 * paths a turn of a live session presented, only while they are regular
 * files, at most 1 MiB; files outside the working directories only when
 * `opts.serveOutsideFiles` allows it.
 */
export function presentedContent(sessions: SessionManager, opts: PresentedReadOptions = {}): ContentProviders {
  return {
    'file:': {
      read: async (params) => {
        const found = presentedFileOf(sessions, params.uri);
        if (found === undefined) {
          throw new DomainError(AhpErrorCodes.ContentNotFound, 'no such content: only files a turn presented are served', { reason: 'not-presented' });
        }
        try {
          return contentResult(await readPresentedContent(found.session, found.file, opts), params);
        } catch (error) {
          if (error instanceof PresentedReadError) {
            const code = error.isContainment ? AhpErrorCodes.PermissionDenied : AhpErrorCodes.ContentNotFound;
            throw new DomainError(code, error.message, { reason: error.reason });
          }
          throw error;
        }
      },
    },
  };
}

/** The presented file behind a `file:` URI that some turn of a live session presented, and that session. */
function presentedFileOf(sessions: SessionManager, uri: string): { session: RecordingSession; file: PresentedFile } | undefined {
  let normal: string;
  try {
    normal = new URL(uri).href;
  } catch {
    return undefined;
  }
  for (const session of sessions.list()) {
    for (const turn of session.turns) {
      for (const file of turn.presented ?? []) {
        const href = fileUri(file.path);
        if (href === uri || href === normal) return { session, file };
      }
    }
  }
  return undefined;
}

function contentResult(content: Buffer, params: ResourceReadParams): ResourceReadResult {
  const text = isUtf8(content) && !isBinary(content);
  const encoding = params.encoding === 'base64' || !text ? 'base64' : 'utf-8';
  return {
    data: content.toString(encoding === 'base64' ? 'base64' : 'utf8'),
    encoding,
    contentType: text ? 'text/plain; charset=utf-8' : 'application/octet-stream',
  };
}
