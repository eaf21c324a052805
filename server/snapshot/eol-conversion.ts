/**
 * End-of-line conversion as git's convert.c does it: which action a path
 * gets from its attributes and `core.autocrlf` / `core.eol`, what `git add`
 * stores (CRLF → LF, the clean side) and what `git checkout` writes
 * (LF → CRLF, the smudge side).
 */
import type { CoreSettings } from './git-config.js';
import type { PathAttributes } from './git-attributes.js';

/** convert.c's `crlf_action` after `convert_attrs` (`text` alone is already resolved to `text-input` or `text-crlf`). */
export type CrlfAction = 'binary' | 'text-input' | 'text-crlf' | 'auto' | 'auto-input' | 'auto-crlf';

/** What the clean side does with a file, as kept in the stat cache. */
export const EOL_KEEP = 0;
/** `text`: every CRLF becomes LF. */
const EOL_TEXT = 1;
/** `text=auto` or `core.autocrlf`: CRLF becomes LF in files that look like text and whose indexed version has no CRLF. */
export const EOL_AUTO = 2;

type EolSettings = Pick<CoreSettings, 'autocrlf' | 'eol'>;

/** True when no path can need a conversion: no attributes and `core.autocrlf=false`. */
export function convertsNothing(settings: EolSettings, attributesEmpty: boolean): boolean {
  return attributesEmpty && settings.autocrlf === 'false';
}

function textEolIsCrlf(settings: EolSettings): boolean {
  if (settings.autocrlf === 'true') return true;
  if (settings.autocrlf === 'input') return false;
  return settings.eol === 'crlf';
}

function crlfAttr(value: PathAttributes['text']): 'text' | 'binary' | 'text-input' | 'auto' | undefined {
  if (value === true) return 'text';
  if (value === false) return 'binary';
  if (value === 'input') return 'text-input';
  if (value === 'auto') return 'auto';
  return undefined;
}

/** convert.c `convert_attrs`: the action for a path (`text` first, the legacy `crlf` attribute when `text` is not set). */
export function crlfAction(attrs: PathAttributes, settings: EolSettings): CrlfAction {
  let action: CrlfAction | 'text' | undefined = crlfAttr(attrs.text) ?? crlfAttr(attrs.crlf);
  if (action !== 'binary') {
    if (action === 'auto' && attrs.eol === 'lf') action = 'auto-input';
    else if (action === 'auto' && attrs.eol === 'crlf') action = 'auto-crlf';
    else if (attrs.eol === 'lf') action = 'text-input';
    else if (attrs.eol === 'crlf') action = 'text-crlf';
  }
  if (action === 'text') return textEolIsCrlf(settings) ? 'text-crlf' : 'text-input';
  if (action !== undefined) return action;
  if (settings.autocrlf === 'true') return 'auto-crlf';
  if (settings.autocrlf === 'input') return 'auto-input';
  return 'binary';
}

/** The clean-side class of an action (see EOL_KEEP, EOL_TEXT, EOL_AUTO). */
export function cleanClass(action: CrlfAction): number {
  if (action === 'binary') return EOL_KEEP;
  return action === 'text-input' || action === 'text-crlf' ? EOL_TEXT : EOL_AUTO;
}

interface TextStats {
  lonecr: number;
  lonelf: number;
  crlf: number;
  nul: number;
  printable: number;
  nonprintable: number;
}

/** convert.c `gather_stats`, over the whole content. */
function gatherStats(buf: Uint8Array): TextStats {
  const s: TextStats = { lonecr: 0, lonelf: 0, crlf: 0, nul: 0, printable: 0, nonprintable: 0 };
  const n = buf.length;
  for (let i = 0; i < n; i++) {
    const c = buf[i]!;
    if (c === 13) {
      if (i + 1 < n && buf[i + 1] === 10) {
        s.crlf++;
        i++;
      } else s.lonecr++;
    } else if (c === 10) s.lonelf++;
    else if (c === 127) s.nonprintable++;
    else if (c < 32) {
      // BS, HT, ESC and FF count as text.
      if (c === 8 || c === 9 || c === 27 || c === 12) s.printable++;
      else {
        if (c === 0) s.nul++;
        s.nonprintable++;
      }
    } else s.printable++;
  }
  // A trailing ^Z (old DOS end of file) is not held against the file.
  if (n >= 1 && buf[n - 1] === 26) s.nonprintable--;
  return s;
}

function isBinary(s: TextStats): boolean {
  return s.lonecr > 0 || s.nul > 0 || s.printable >> 7 < s.nonprintable;
}

/**
 * The clean side without the index check: the LF content `git add` would
 * store, or undefined when the content is stored as it is. For EOL_AUTO
 * the caller must still ask {@link hasCrlfText} of the version in the
 * index ("safer autocrlf": a file committed with CRLF stays CRLF).
 */
export function cleanContent(content: Uint8Array, eolClass: number): Buffer | undefined {
  if (eolClass === EOL_KEEP || content.length === 0 || content.indexOf(13) < 0) return undefined;
  if (eolClass === EOL_AUTO) {
    const s = gatherStats(content);
    if (s.crlf === 0 || isBinary(s)) return undefined;
  }
  const out = Buffer.allocUnsafe(content.length);
  let o = 0;
  const n = content.length;
  for (let i = 0; i < n; i++) {
    const c = content[i]!;
    // An auto file has no lone CR (it would be binary), so every CR goes.
    if (c === 13 && (eolClass === EOL_AUTO || (i + 1 < n && content[i + 1] === 10))) continue;
    out[o++] = c;
  }
  return out.subarray(0, o);
}

/** convert.c `has_crlf_in_index` on a blob: text (by git's guess) with at least one CRLF. */
export function hasCrlfText(blob: Uint8Array): boolean {
  if (blob.indexOf(13) < 0) return false;
  const s = gatherStats(blob);
  return s.crlf > 0 && !isBinary(s);
}

function outputIsCrlf(action: CrlfAction, settings: EolSettings): boolean {
  if (action === 'text-crlf' || action === 'auto-crlf') return true;
  if (action === 'auto') return textEolIsCrlf(settings);
  return false;
}

/**
 * The smudge side (convert.c `crlf_to_worktree`): the content `git
 * checkout` writes for a stored blob, or the blob itself when nothing
 * changes.
 */
export function smudgeContent(blob: Uint8Array, action: CrlfAction, settings: EolSettings): Uint8Array {
  if (blob.length === 0 || !outputIsCrlf(action, settings) || blob.indexOf(10) < 0) return blob;
  const s = gatherStats(blob);
  if (s.lonelf === 0) return blob;
  if (action === 'auto' || action === 'auto-crlf' || action === 'auto-input') {
    // A blob already holding CR or CRLF was committed that way on purpose: left alone.
    if (s.lonecr > 0 || s.crlf > 0 || isBinary(s)) return blob;
  }
  const out = Buffer.allocUnsafe(blob.length + s.lonelf);
  let o = 0;
  for (let i = 0; i < blob.length; i++) {
    const c = blob[i]!;
    if (c === 10 && (i === 0 || blob[i - 1] !== 13)) out[o++] = 13;
    out[o++] = c;
  }
  return out.subarray(0, o);
}
