import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { ChannelPauseBanners } from '../../components/channel-pause-banner';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { QueryState } from '../../components/query-state';
import { fieldErrors, trpc } from '../../trpc';
import { capDraft, capInput, FrequencyCapFields } from './frequency-cap-fields';
import { SendingDomainsPanel } from './sending-domains';

// Settings -> Channels: the account's email and WhatsApp senders (docs/channels.md). Secrets
// are write-only: their fields start empty, and empty keeps what is stored.

type EmailChannel = NonNullable<ReturnType<typeof useEmail>['data']>;
type WhatsAppChannel = NonNullable<ReturnType<typeof useWhatsApp>['data']>;

function useEmail() {
  return useQuery(trpc.dashboard.channels.email.queryOptions());
}
function useWhatsApp() {
  return useQuery(trpc.dashboard.channels.whatsapp.queryOptions());
}

const rateOf = (text: string) => (text.trim() === '' ? null : Number(text));

export function ChannelsPage() {
  const email = useEmail();
  const whatsapp = useWhatsApp();
  return (
    <>
      <div className="toolbar">
        <p>Where this account&apos;s messages leave from. Passwords, keys and tokens are stored encrypted and never shown again: leave a field empty to keep what is stored.</p>
      </div>
      <ChannelPauseBanners />
      <div className="panels">
        <QueryState query={email} loading="Loading the email sender…">
          {(data) => <EmailPanel channel={data} />}
        </QueryState>
        <SendingDomainsPanel />
        <QueryState query={whatsapp} loading="Loading the WhatsApp sender…">
          {(data) => <WhatsAppPanel channel={data} />}
        </QueryState>
      </div>
    </>
  );
}

function EmailPanel({ channel }: { channel: EmailChannel }) {
  const queryClient = useQueryClient();
  const [from, setFrom] = useState(channel.from ?? '');
  const [replyTo, setReplyTo] = useState(channel.replyTo ?? '');
  const [smtpUrl, setSmtpUrl] = useState('');
  const [domain, setDomain] = useState(channel.dkim?.domain ?? '');
  const [selector, setSelector] = useState(channel.dkim?.selector ?? '');
  const [privateKey, setPrivateKey] = useState('');
  const [rate, setRate] = useState(String(channel.maxPerSecond));
  const [bounceDomain, setBounceDomain] = useState(channel.bounceDomain ?? '');
  const [opens, setOpens] = useState(channel.tracking.opens);
  const [clicks, setClicks] = useState(channel.tracking.clicks);
  const [cap, setCap] = useState(capDraft(channel.frequencyCap));
  const keyId = useId();
  const save = useMutation(
    trpc.dashboard.channels.setEmail.mutationOptions({
      onSuccess: (saved) => {
        queryClient.setQueryData(trpc.dashboard.channels.email.queryKey(), saved);
        // Saving resumes a paused channel.
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.channels.pauses.pathKey() });
        setSmtpUrl('');
        setPrivateKey('');
      },
    }),
  );
  const errors = fieldErrors(save.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({
      from: from.trim(),
      replyTo: replyTo.trim() === '' ? null : replyTo.trim(),
      ...(smtpUrl.trim() !== '' && { smtpUrl: smtpUrl.trim() }),
      ...(privateKey.trim() !== '' && { dkim: { domain, selector, privateKey } }),
      maxPerSecond: rateOf(rate),
      bounceDomain: bounceDomain.trim() === '' ? null : bounceDomain.trim(),
      tracking: { opens, clicks },
      frequencyCap: capInput(cap),
    });
  };
  const relay = channel.smtp.configured
    ? `${channel.smtp.host} (${channel.smtp.source === 'account' ? 'this account\u2019s relay' : 'the server\u2019s SMTP_URL'})`
    : 'None: emails are written to the outbox folder';
  return (
    <section className="panel" aria-labelledby="email-heading">
      <h2 id="email-heading">Email</h2>
      <form onSubmit={submit} noValidate>
        <ErrorBanner error={save.error} />
        {save.isSuccess && <p role="status" className="banner">Email sender saved.</p>}
        <Field label="From" type="email" value={from} onChange={(e) => setFrom(e.target.value)} error={errors.from} autoComplete="off" />
        <Field label="Reply-To (optional)" type="email" value={replyTo} onChange={(e) => setReplyTo(e.target.value)} error={errors.replyTo} autoComplete="off" />
        <Field
          label="SMTP relay URL"
          hint={<>In use: {relay}. smtp://user:password@host:587 (STARTTLS) or smtps://…:465 (TLS).</>}
          type="password"
          value={smtpUrl}
          placeholder={channel.smtp.source === 'account' ? 'Stored: leave empty to keep' : ''}
          onChange={(e) => setSmtpUrl(e.target.value)}
          error={errors.smtpUrl}
          autoComplete="off"
        />
        <Field label="DKIM domain" value={domain} onChange={(e) => setDomain(e.target.value)} error={errors['dkim.domain']} autoComplete="off" />
        <Field label="DKIM selector" value={selector} onChange={(e) => setSelector(e.target.value)} error={errors['dkim.selector']} autoComplete="off" />
        <div className="field">
          <label htmlFor={keyId}>DKIM private key (PEM)</label>
          <p className="hint" id={`${keyId}-hint`}>{channel.dkim ? 'A key is stored: leave empty to keep it.' : 'An RSA key, 2048 bits advised.'}</p>
          <textarea
            id={keyId}
            rows={4}
            value={privateKey}
            onChange={(e) => setPrivateKey(e.target.value)}
            aria-describedby={errors['dkim.privateKey'] ? `${keyId}-hint ${keyId}-error` : `${keyId}-hint`}
            aria-invalid={errors['dkim.privateKey'] ? true : undefined}
            spellCheck={false}
          />
          {errors['dkim.privateKey'] && <p className="error" id={`${keyId}-error`}>{errors['dkim.privateKey']}</p>}
        </div>
        <Field label="Emails per second" type="number" min={1} value={rate} onChange={(e) => setRate(e.target.value)} error={errors.maxPerSecond} />
        <Field
          label="Bounce domain (optional)"
          hint="One of the verified sending domains below: where late bounces come back. Empty: the server's."
          value={bounceDomain}
          onChange={(e) => setBounceDomain(e.target.value)}
          error={errors.bounceDomain}
          autoComplete="off"
        />
        <fieldset className="field">
          <legend>Open and click tracking</legend>
          <label className="choice">
            <input type="checkbox" checked={opens} onChange={(e) => setOpens(e.target.checked)} /> Track opens (a 1x1 image)
          </label>
          <label className="choice">
            <input type="checkbox" checked={clicks} onChange={(e) => setClicks(e.target.checked)} /> Track clicks (links rewritten to signed redirects; each email
            step must also opt in with trackClicks)
          </label>
          {(errors['tracking.opens'] ?? errors['tracking.clicks'] ?? errors.tracking) && (
            <p className="error">{errors['tracking.opens'] ?? errors['tracking.clicks'] ?? errors.tracking}</p>
          )}
        </fieldset>
        <FrequencyCapFields draft={cap} onChange={setCap} errors={errors} stored={channel.frequencyCap} unit="email" />
        <div className="actions start">
          <button type="submit" disabled={save.isPending}>Save email sender</button>
        </div>
      </form>
      {channel.dkim && (
        <div className="dns-record">
          <h3>DNS record to publish</h3>
          <p className="hint">Add this TXT record at your DNS provider so that receivers can check the signature.</p>
          <dl className="facts">
            <div>
              <dt>Name</dt>
              <dd><code>{channel.dkim.dnsRecord.name}</code></dd>
            </div>
            <div>
              <dt>Type</dt>
              <dd>TXT</dd>
            </div>
            <div>
              <dt>Value</dt>
              <dd className="wrap"><code>{channel.dkim.dnsRecord.value}</code></dd>
            </div>
          </dl>
        </div>
      )}
    </section>
  );
}

function WhatsAppPanel({ channel }: { channel: WhatsAppChannel }) {
  const queryClient = useQueryClient();
  const [phoneNumberId, setPhoneNumberId] = useState(channel.phoneNumberId ?? '');
  const [accessToken, setAccessToken] = useState('');
  const [rate, setRate] = useState(String(channel.maxPerSecond));
  const [appSecret, setAppSecret] = useState('');
  const [verifyToken, setVerifyToken] = useState('');
  const [keywords, setKeywords] = useState(channel.optOutKeywords.join(', '));
  const [cap, setCap] = useState(capDraft(channel.frequencyCap));
  const save = useMutation(
    trpc.dashboard.channels.setWhatsApp.mutationOptions({
      onSuccess: (saved) => {
        queryClient.setQueryData(trpc.dashboard.channels.whatsapp.queryKey(), saved);
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.channels.pauses.pathKey() });
        setAccessToken('');
        setAppSecret('');
        setVerifyToken('');
        setKeywords(saved.optOutKeywords.join(', '));
      },
    }),
  );
  const errors = fieldErrors(save.error);
  // A keyword's own error (optOutKeywords.N) shows at the one field.
  const keywordError = errors.optOutKeywords ?? Object.entries(errors).find(([path]) => path.startsWith('optOutKeywords.'))?.[1];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const list = keywords.split(',').map((keyword) => keyword.trim()).filter((keyword) => keyword !== '');
    save.mutate({
      phoneNumberId: phoneNumberId.trim(),
      ...(accessToken.trim() !== '' && { accessToken: accessToken.trim() }),
      maxPerSecond: rateOf(rate),
      ...(appSecret.trim() !== '' && { appSecret: appSecret.trim() }),
      ...(verifyToken.trim() !== '' && { verifyToken: verifyToken.trim() }),
      // Emptied: the defaults again.
      optOutKeywords: list.length > 0 ? list : null,
      frequencyCap: capInput(cap),
    });
  };
  return (
    <section className="panel" aria-labelledby="whatsapp-heading">
      <h2 id="whatsapp-heading">WhatsApp</h2>
      <p className="hint">
        {channel.configured ? `Set up: token ending in ${channel.accessToken.last4}.` : 'Not set up: messages are written to the outbox folder.'}
      </p>
      <form onSubmit={submit} noValidate>
        <ErrorBanner error={save.error} />
        {save.isSuccess && <p role="status" className="banner">WhatsApp sender saved.</p>}
        <Field
          label="Phone number ID"
          hint="WhatsApp Manager › API Setup: the number's ID, not the number."
          value={phoneNumberId}
          inputMode="numeric"
          onChange={(e) => setPhoneNumberId(e.target.value)}
          error={errors.phoneNumberId}
          autoComplete="off"
        />
        <Field
          label="Access token"
          hint="A system user's permanent token with whatsapp_business_messaging."
          type="password"
          value={accessToken}
          placeholder={channel.accessToken.configured ? 'Stored: leave empty to keep' : ''}
          onChange={(e) => setAccessToken(e.target.value)}
          error={errors.accessToken}
          autoComplete="off"
        />
        <Field label="Messages per second" type="number" min={1} value={rate} onChange={(e) => setRate(e.target.value)} error={errors.maxPerSecond} />
        <Field
          label="Opt-out keywords"
          hint="Comma-separated. A message that is one of them (case and accents ignored), or a button with one as its payload, unsubscribes the contact. Empty: STOP, UNSUBSCRIBE, ARRET, BAJA, PARAR, STOPP."
          value={keywords}
          onChange={(e) => setKeywords(e.target.value)}
          error={keywordError}
          autoComplete="off"
        />
        <Field
          label="Webhook app secret"
          hint="Only when this number belongs to a Meta app of its own: App settings › Basic › App secret. Empty: the server's."
          type="password"
          value={appSecret}
          placeholder={channel.appSecret.configured ? 'Stored: leave empty to keep' : ''}
          onChange={(e) => setAppSecret(e.target.value)}
          error={errors.appSecret}
          autoComplete="off"
        />
        <Field
          label="Webhook verify token"
          hint="The verify token typed in that app's webhook settings."
          type="password"
          value={verifyToken}
          placeholder={channel.verifyToken.configured ? 'Stored: leave empty to keep' : ''}
          onChange={(e) => setVerifyToken(e.target.value)}
          error={errors.verifyToken}
          autoComplete="off"
        />
        <FrequencyCapFields draft={cap} onChange={setCap} errors={errors} stored={channel.frequencyCap} unit="WhatsApp message" />
        <div className="actions start">
          <button type="submit" disabled={save.isPending}>Save WhatsApp sender</button>
        </div>
      </form>
    </section>
  );
}
