// What a response's headers say about the document: its media type and its filename.

export function mediaType(header: string | undefined): string | null {
  const type = header?.split(';')[0].trim().toLowerCase();
  return type ? type : null;
}

/** Filename from Content-Disposition (filename* first), else the URL's last path segment. */
export function filenameFrom(disposition: string | undefined, url: URL): string | null {
  if (disposition) {
    const star = /(?:^|;)\s*filename\*\s*=\s*([\w!#$%&+^`{}~-]*)'[^']*'([^;\s]+)/i.exec(disposition);
    if (star) {
      const name = cleanFilename(percentDecode(star[2], star[1].toLowerCase() === 'iso-8859-1' ? 'latin1' : 'utf8'));
      if (name) return name;
    }
    const plain = /(?:^|;)\s*filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(disposition);
    if (plain) {
      const raw = plain[1] !== undefined ? plain[1].replace(/\\(.)/g, '$1') : plain[2];
      const name = cleanFilename(fromLatin1Header(raw));
      if (name) return name;
    }
  }
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const last = segments[segments.length - 1];
  if (last === undefined) return null;
  try {
    return cleanFilename(decodeURIComponent(last));
  } catch {
    return cleanFilename(last);
  }
}

function percentDecode(text: string, encoding: 'utf8' | 'latin1'): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '%' && /^[0-9a-f]{2}$/i.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(text.charCodeAt(i) & 0xff);
    }
  }
  return Buffer.from(bytes).toString(encoding);
}

/** Node reads header bytes as latin1; many servers send UTF-8 names there anyway. */
function fromLatin1Header(text: string): string {
  if (!/[\x80-\xff]/.test(text)) return text;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(text, 'latin1'));
  } catch {
    return text;
  }
}

function cleanFilename(name: string): string | null {
  const base = name.replace(/\\/g, '/').split('/').pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\x00-\x1f\x7f]/g, '').trim().slice(0, 255);
  return clean === '' || clean === '.' || clean === '..' ? null : clean;
}
