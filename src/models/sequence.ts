import { Column, DataType, ForeignKey, Model, Table } from 'sequelize-typescript';
import { Account } from './account';

export const SEQUENCE_STATUSES = ['draft', 'active', 'paused', 'archived'] as const;
export type SequenceStatus = (typeof SEQUENCE_STATUSES)[number];

@Table({ tableName: 'sequences', underscored: true, timestamps: true })
export class Sequence extends Model {
  @Column({ type: DataType.UUID, primaryKey: true, defaultValue: DataType.UUIDV4 })
  declare id: string;

  @ForeignKey(() => Account)
  @Column({ type: DataType.UUID, allowNull: false })
  declare accountId: string;

  @Column({ type: DataType.STRING(255), allowNull: false })
  declare name: string;

  @Column({ type: DataType.STRING(16), allowNull: false, defaultValue: 'draft' })
  declare status: SequenceStatus;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare createdAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare updatedAt: Date;
}
