import pg from 'pg';

/** The advisory lock whose holder is the leader of every instance sharing the database. */
const LEADER_LOCK = 0x6c656164;

export interface LeaderElectionOptions {
  connection: pg.ClientConfig;
  /** How often a follower tries to take the lead, and the leader checks it still holds it. */
  intervalMs?: number;
  onChange: (leader: boolean) => void;
}

/**
 * Leader election through the database: the instance whose session holds an advisory lock
 * leads. The lock goes with the session, so when the leader dies or loses the database, another
 * instance takes it at its next try.
 */
export class PostgresLeaderElection {
  private client: pg.Client | undefined;
  private leader = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: LeaderElectionOptions) {}

  get isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    this.schedule(0);
  }

  /**
   * Gives up the lead, then the session and the lock with it: another instance may take the lead
   * as soon as the lock is free, by which time this one no longer claims it.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    this.setLeader(false);
    await this.client?.end().catch(() => {});
    this.client = undefined;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.attempt().finally(() => this.schedule(this.options.intervalMs ?? 1000));
    }, delay);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    try {
      if (this.leader) {
        await this.client!.query('SELECT 1');
        return;
      }
      this.client ??= await this.connect();
      const result = await this.client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [LEADER_LOCK]);
      if (!this.stopped) this.setLeader(result.rows[0]?.locked === true);
    } catch {
      this.drop();
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ ...this.options.connection, keepAlive: true });
    client.on('error', () => this.drop());
    client.on('end', () => this.drop());
    await client.connect();
    return client;
  }

  /** The session is gone, and the lock with it. */
  private drop(): void {
    const client = this.client;
    this.client = undefined;
    void client?.end().catch(() => {});
    this.setLeader(false);
  }

  private setLeader(leader: boolean): void {
    if (this.leader === leader) return;
    this.leader = leader;
    this.options.onChange(leader);
  }
}
