// The words that opt a contact out of WhatsApp when they send one (docs/channels.md "WhatsApp
// opt-outs and sender health"; the defaults in docs/decisions.md). Each account may set its own
// list on PUT /channels/whatsapp; until it does, these.

export const DEFAULT_OPT_OUT_KEYWORDS: readonly string[] = ['STOP', 'UNSUBSCRIBE', 'ARRET', 'BAJA', 'PARAR', 'STOPP'];

export const MAX_OPT_OUT_KEYWORDS = 50;
export const MAX_OPT_OUT_KEYWORD_LENGTH = 64;

// What is compared: the whole message, not a word in it ("stop sending me the blue one?" is a
// message for a person to read, not an opt-out). Case and accents do not count (`Arrêt`,
// `arret`), nor spaces around or inside it (` stop `, `STOP  PROMOTIONS`), nor punctuation
// around it (`Stop!`, `¡Baja!`).
export function optOutKey(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '');
}

// The keys of an account's list (null: the defaults), to look texts up in.
export function optOutKeys(keywords: readonly string[] | null): Set<string> {
  return new Set((keywords ?? DEFAULT_OPT_OUT_KEYWORDS).map(optOutKey).filter((key) => key.length > 0));
}

// Whether any of these texts (a message's body; a button's payload and its text; an interactive
// reply's id and title) is one of the keys.
export function isOptOut(keys: ReadonlySet<string>, texts: ReadonlyArray<string | null>): boolean {
  return texts.some((text) => text !== null && text.length <= MAX_OPT_OUT_KEYWORD_LENGTH * 4 && keys.has(optOutKey(text)));
}
