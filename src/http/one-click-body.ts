// The body of an RFC 8058 one-click POST: `List-Unsubscribe=One-Click`, sent as
// application/x-www-form-urlencoded or as multipart/form-data (the RFC allows either). Only
// that one field is looked for; anything else in the body is ignored.

const FIELD = 'List-Unsubscribe';
const VALUE = 'One-Click';

export function isOneClickBody(contentType: string | undefined, body: Buffer): boolean {
  const type = (contentType ?? '').toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) {
    return new URLSearchParams(body.toString('utf8')).getAll(FIELD).includes(VALUE);
  }
  if (type.startsWith('multipart/form-data')) return multipartValues(contentType!, body).includes(VALUE);
  return false;
}

// The values of the parts named List-Unsubscribe.
function multipartValues(contentType: string, body: Buffer): string[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const delimiter = boundary?.[1] ?? boundary?.[2];
  if (!delimiter) return [];
  const values: string[] = [];
  for (const part of body.toString('utf8').split(`--${delimiter}`)) {
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) continue;
    const headers = part.slice(0, split);
    const name = /content-disposition:\s*form-data;[^\r\n]*\bname="([^"]*)"/i.exec(headers)?.[1];
    if (name === FIELD) values.push(part.slice(split + 4).replace(/\r\n$/, '').trim());
  }
  return values;
}
