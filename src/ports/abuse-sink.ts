/** Where abuse reports go: operators, never the database. */
export interface AbuseReport {
  slug: string;
  reason: 'spam' | 'phishing' | 'malware' | 'abuse' | 'copyright' | 'other';
  detail: string;
  /** The page's tenant and artifact, for the operator's convenience (only live pages are reported). */
  tenantName: string;
  artifactId: string;
  reporterIp: string;
  receivedAt: string;
}

export interface AbuseSink {
  /** Takes the report without waiting on anything slow (a webhook delivers in the background). */
  report(report: AbuseReport): Promise<void>;
  /** Lets background deliveries finish, within a bounded time, at shutdown. */
  close?(): Promise<void>;
}
