import type { AbuseReport } from '../ports/abuse-sink.js';
import type { ArtifactRow, PageRow, TenantRow } from '../ports/metadata-store.js';
import type { RateRule } from '../ports/rate-limiter.js';
import type { GateInfo, PublishResult, ReportReceipt, UnlockResult, UnpublishResult } from '../wire/pages.js';
import { RateLimitedError } from './access.js';
import { CONTENT_TOKEN_SECONDS, issueContentToken, verifyContentToken } from './content-token.js';
import type { CoreDeps } from './context.js';
import { CairnError, invalid } from './errors.js';
import { ARTIFACT_ID, newPageSlug, PAGE_SLUG } from './ids.js';
import { checkArtifactId, isServable, requireReadable } from './lifecycle.js';
import type { PasswordHasher } from './passwords.js';
import { PLANS } from './plans.js';
import { publicPageUrl } from './records.js';
import { isHtmlType } from './renderer.js';
import type { Caller } from './tenants.js';
import { toIso } from './time.js';
import { refuseUnstorableText, truncateCodePoints } from './validation.js';

/** A page that may be shown right now: live, its artifact servable, its tenant not suspended. */
export interface LivePage {
  page: PageRow;
  artifact: ArtifactRow;
  tenant: TenantRow;
}

export const REPORT_REASONS = ['spam', 'phishing', 'malware', 'abuse', 'copyright', 'other'] as const;
export const REPORT_DETAIL_MAX = 2_000;
const TITLE_MAX = 200;
const PASSWORD_MAX = 1_024;

/**
 * Public-endpoint controls, checked before any password hashing so a guesser pays nothing of
 * ours: per slug (10 attempts a minute from anywhere) and per IP (30 a minute over all slugs);
 * reports: 5 an hour per IP per slug (429 beyond), and at most 20 an hour per IP over all slugs
 * are forwarded to the operators (beyond that, still 202, but dropped).
 */
export const UNLOCK_PER_SLUG: RateRule = { burst: 10, sustainedPerSecond: 10 / 60 };
export const UNLOCK_PER_IP: RateRule = { burst: 30, sustainedPerSecond: 30 / 60 };
export const REPORT_PER_IP_SLUG: RateRule = { burst: 5, sustainedPerSecond: 5 / 3600 };
export const REPORT_PER_IP: RateRule = { burst: 20, sustainedPerSecond: 20 / 3600 };

const RECEIVED = { received: true } as const;

/** The ports and settings this service uses, of CoreDeps. */
export type PageServiceDeps = Pick<
  CoreDeps,
  'artifactStore' | 'sharingStore' | 'abuse' | 'clock' | 'limiter' | 'log' | 'tokenSecret' | 'upgradeUrl' | 'origins'
>;

/**
 * Public pages: publishing an artifact as `{viewer}/a/<slug>`, taking it down, the password gate
 * (gate-info, unlock, content tokens) and abuse reports. Every "no" of the public side is the
 * same 404, so nothing tells a stranger whether a slug exists. The API's public endpoints spend
 * the page's tenant rate limit at admission (AccessService.limitPublicPage), not here.
 */
export class PageService {
  constructor(
    private readonly deps: PageServiceDeps,
    private readonly passwords: PasswordHasher,
  ) {}

  /**
   * `keepPassword` (the dashboard's "keep the current password"): `access: "password"` without a
   * password keeps the hash the page has, so its owner need not retype it. The API never sets it.
   */
  async publish(
    caller: Caller,
    id: string,
    body: unknown,
    opts: { keepPassword?: boolean } = {},
  ): Promise<PublishResult> {
    const input = parsePublishBody(body, opts.keepPassword === true);
    checkArtifactId(id);
    const { artifactStore, sharingStore, clock, origins } = this.deps;
    const now = clock.now();
    const artifact = requireReadable(await artifactStore.getArtifact(caller.tenant.id, id), now, id);
    const existing = await sharingStore.getPageForArtifact(caller.tenant.id, id);
    if (existing?.takenDownAt != null) throw pageTakenDown();
    let passwordHash: string | null = null;
    if (input.access === 'password') {
      const proOnly = !PLANS[caller.tenant.plan].passwordPages;
      if (isHtmlType(artifact.contentType)) {
        // No argument changes this for the artifact: the message names the ways that do work, and
        // the plan's refusal too (it would otherwise come only after the next try).
        throw new CairnError(
          'invalid_request',
          `${HTML_PASSWORD_REFUSAL}${proOnly ? `. Password pages also need the Pro plan, which this account (${caller.tenant.plan}) is not on` : ''}`,
          proOnly ? { upgradeUrl: this.deps.upgradeUrl } : {},
        );
      }
      if (proOnly) {
        throw new CairnError('quota_exceeded', 'Password-protected pages need the Pro plan.', {
          upgradeUrl: this.deps.upgradeUrl,
        });
      }
      if (input.password !== null) passwordHash = await this.passwords.hash(input.password);
      else if (existing?.access === 'password' && existing.passwordHash) passwordHash = existing.passwordHash;
      else throw invalid('This page has no password to keep: type one.');
    }
    const page = await sharingStore.upsertPage(
      {
        slug: existing?.slug ?? newPageSlug(),
        tenantId: caller.tenant.id,
        artifactId: id,
        visibility: input.visibility,
        access: input.access,
        title: input.title,
        passwordHash,
      },
      now,
    );
    // The store leaves a taken-down page alone, also one taken down since the check above.
    if (page.takenDownAt !== null) throw pageTakenDown();
    return {
      page_id: page.slug,
      public_url: publicPageUrl(origins, page.slug),
      visibility: page.visibility,
      access: page.access,
    };
  }

  /** Unpublish by `art_…` or `pg_…`, within the caller's tenant only. Idempotent. */
  async unpublish(caller: Caller, idOrSlug: string): Promise<UnpublishResult> {
    if (!ARTIFACT_ID.test(idOrSlug) && !PAGE_SLUG.test(idOrSlug)) {
      throw invalid(
        `${JSON.stringify(idOrSlug.slice(0, 80))} is neither an artifact id (art_ followed by 16 letters or digits) ` +
          'nor a page id (pg_ followed by 16).',
      );
    }
    const page = await this.deps.sharingStore.unpublishPage(caller.tenant.id, idOrSlug, this.deps.clock.now());
    if (!page) {
      throw new CairnError(
        'artifact_not_found',
        `Page for ${idOrSlug} not found in this account (never published, or its artifact is gone). ` +
          'Published artifacts show page.public_url in their record: GET /v1/artifacts/{id}.',
      );
    }
    return { page_id: page.slug, unpublished: true };
  }

  /**
   * Operator takedown (`cairn admin page unpublish`): any tenant's page by slug. It sticks: the
   * owner's publish is refused with `page_taken_down` until an operator restores the page.
   */
  async takeDown(slug: string): Promise<PageRow | null> {
    if (!PAGE_SLUG.test(slug)) return null;
    return this.deps.sharingStore.takeDownPage(slug, this.deps.clock.now());
  }

  /** `cairn admin page restore`: lifts a takedown; the page stays offline until its owner publishes it. */
  async restore(slug: string): Promise<PageRow | null> {
    if (!PAGE_SLUG.test(slug)) return null;
    return this.deps.sharingStore.restorePage(slug, this.deps.clock.now());
  }

  /** The page behind a slug when it may be shown now, else null. */
  async resolve(slug: string): Promise<LivePage | null> {
    if (!PAGE_SLUG.test(slug)) return null;
    const found = await this.deps.sharingStore.getPageBySlug(slug);
    if (!found?.page.live || found.tenant.suspended) return null;
    if (!isServable(found.artifact, this.deps.clock.now())) return null;
    return found;
  }

  async gateInfo(slug: string): Promise<GateInfo> {
    const live = await this.resolve(slug);
    if (live?.page.access !== 'password') throw pageNotFound();
    return { exists: true, access: 'password' };
  }

  async unlock(slug: string, body: unknown, ip: string): Promise<UnlockResult> {
    const password = (body as { password?: unknown } | null)?.password;
    if (typeof password !== 'string' || password === '') {
      throw invalid('password is required and must be a non-empty string.');
    }
    // Attempt caps first, before any lookup or hashing.
    await this.take(`unlock:slug:${slug}`, UNLOCK_PER_SLUG);
    await this.take(`unlock:ip:${ip}`, UNLOCK_PER_IP);
    const live = await this.resolve(slug);
    if (live?.page.access !== 'password' || !live.page.passwordHash) {
      // Spend the same time a real check would, so timing does not tell pages apart.
      await this.passwords.verifyDummy(password);
      throw pageNotFound();
    }
    if (password.length > PASSWORD_MAX || !(await this.passwords.verify(live.page.passwordHash, password))) {
      throw new CairnError('unauthorized', 'Wrong password.');
    }
    return {
      content_token: issueContentToken(this.deps.tokenSecret, slug, live.page.passwordHash, this.deps.clock.now()),
      expires_in: CONTENT_TOKEN_SECONDS,
    };
  }

  /**
   * True when `token` opens this password page right now (content origin only): for its slug,
   * unexpired, and issued for the password the page has now.
   */
  acceptsContentToken(page: PageRow, token: string): boolean {
    if (page.passwordHash === null) return false;
    return verifyContentToken(this.deps.tokenSecret, token, page.slug, page.passwordHash, this.deps.clock.now());
  }

  /**
   * Always `{received: true}` (or 429 past the per-IP-per-slug cap): a report neither reveals nor
   * changes anything. It reaches the operators only when the slug is a live page and the
   * reporter is within its hourly budget over all slugs, so one IP cannot flood the abuse sink
   * with reports on made-up or many slugs.
   */
  async report(slug: string, body: unknown, ip: string): Promise<ReportReceipt> {
    // A slug of the wrong shape is never a page (the shape is public): nothing to count or forward.
    if (!PAGE_SLUG.test(slug)) return RECEIVED;
    await this.take(`report:${ip}:${slug}`, REPORT_PER_IP_SLUG);
    const { limiter, clock } = this.deps;
    if (!(await limiter.take(`report-ip:${ip}`, REPORT_PER_IP, clock.now())).allowed) return RECEIVED;
    const live = await this.resolve(slug);
    if (!live) return RECEIVED;
    const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const report: AbuseReport = {
      slug: live.page.slug,
      reason: normaliseReason(fields.reason),
      detail: typeof fields.detail === 'string' ? truncateCodePoints(fields.detail, REPORT_DETAIL_MAX) : '',
      tenantName: live.tenant.name,
      artifactId: live.artifact.id,
      reporterIp: ip,
      receivedAt: toIso(clock.now()),
    };
    try {
      await this.deps.abuse.report(report);
    } catch (err) {
      // The reporter is not told about our plumbing; the operator log is.
      this.deps.log.error({ err, slug: report.slug }, 'abuse report could not be forwarded');
    }
    return RECEIVED;
  }

  private async take(key: string, rule: RateRule): Promise<void> {
    const decision = await this.deps.limiter.take(key, rule, this.deps.clock.now());
    if (!decision.allowed) throw new RateLimitedError(decision);
  }
}

export function normaliseReason(reason: unknown): AbuseReport['reason'] {
  return typeof reason === 'string' && (REPORT_REASONS as readonly string[]).includes(reason)
    ? (reason as AbuseReport['reason'])
    : 'other';
}

const pageNotFound = () => new CairnError('artifact_not_found', 'Page not found.');
const pageTakenDown = () =>
  new CairnError(
    'page_taken_down',
    'An operator took this page down; it cannot be published again unless the operator restores it.',
  );

interface PublishInput {
  visibility: 'unlisted' | 'public';
  access: 'none' | 'password';
  title: string | null;
  password: string | null;
}

/**
 * Why an HTML artifact gets no password page, and what to do instead. Clients match its start
 * ("Password access is not available for HTML artifacts"): keep it.
 */
export const HTML_PASSWORD_REFUSAL =
  'Password access is not available for HTML artifacts (text/html, application/xhtml+xml): the page runs ' +
  'in a sandbox no password gate can cover, so no retry with other arguments will make one. Instead, ' +
  'publish it without a password, share it with a download link, or store it in a non-HTML format ' +
  '(Markdown, PDF, plain text) and publish that with a password';

function parsePublishBody(body: unknown, passwordOptional: boolean): PublishInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('The request body must be a JSON object with at least `visibility`.');
  }
  const b = body as Record<string, unknown>;
  if (b.visibility !== 'unlisted' && b.visibility !== 'public') {
    throw invalid('visibility is required and must be "unlisted" or "public".');
  }
  const access = b.access ?? 'none';
  if (access !== 'none' && access !== 'password') throw invalid('access must be "none" or "password".');
  let title: string | null = null;
  if (b.title !== undefined && b.title !== null) {
    if (typeof b.title !== 'string') throw invalid('title must be a string.');
    if (b.title.length > TITLE_MAX) throw invalid(`title must be at most ${TITLE_MAX} characters.`);
    refuseUnstorableText(b.title, 'title');
    title = b.title.trim() === '' ? null : b.title;
  }
  let password: string | null = null;
  // With no password given, the caller keeps the page's current one (or refuses when it has none).
  const keeps = passwordOptional && (b.password === undefined || b.password === '');
  if (access === 'password' && !keeps) {
    if (typeof b.password !== 'string' || b.password === '') {
      throw invalid('password is required (a non-empty string) when access is "password".');
    }
    if (b.password.length > PASSWORD_MAX) throw invalid(`password must be at most ${PASSWORD_MAX} characters.`);
    refuseUnstorableText(b.password, 'password');
    password = b.password;
  } else if (access === 'none' && b.password !== undefined && b.password !== null) {
    throw invalid('password is only accepted with access "password".');
  }
  return { visibility: b.visibility, access, title, password };
}
