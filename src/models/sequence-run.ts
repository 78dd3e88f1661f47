import { Column, DataType, ForeignKey, Model, Table } from 'sequelize-typescript';
import { Account } from './account';
import { Contact } from './contact';
import { Sequence } from './sequence';

export const RUN_STATUSES = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['pending', 'running', 'paused'];

// The one-active-run rule lives in the database (see the migration): on MySQL/MariaDB a stored
// generated column `active_flag` in a unique index, on SQLite a partial unique index. The
// generated column is deliberately not an attribute here: writing it is an error on MySQL.
@Table({ tableName: 'sequence_runs', underscored: true, timestamps: true })
export class SequenceRun extends Model {
  @Column({ type: DataType.UUID, primaryKey: true, defaultValue: DataType.UUIDV4 })
  declare id: string;

  @ForeignKey(() => Account)
  @Column({ type: DataType.UUID, allowNull: false })
  declare accountId: string;

  @ForeignKey(() => Sequence)
  @Column({ type: DataType.UUID, allowNull: false })
  declare sequenceId: string;

  @ForeignKey(() => Contact)
  @Column({ type: DataType.UUID, allowNull: false })
  declare contactId: string;

  @Column({ type: DataType.STRING(16), allowNull: false, defaultValue: 'pending' })
  declare status: RunStatus;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare startedAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: true })
  declare completedAt: Date | null;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare createdAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare updatedAt: Date;
}
