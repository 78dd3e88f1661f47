import { Column, DataType, ForeignKey, Model, Table } from 'sequelize-typescript';
import { Account } from './account';
import { Sequence } from './sequence';

// The record of one enroll-by-ids call and its counts.
@Table({ tableName: 'enrollments', underscored: true, timestamps: true })
export class Enrollment extends Model {
  @Column({ type: DataType.UUID, primaryKey: true, defaultValue: DataType.UUIDV4 })
  declare id: string;

  @ForeignKey(() => Account)
  @Column({ type: DataType.UUID, allowNull: false })
  declare accountId: string;

  @ForeignKey(() => Sequence)
  @Column({ type: DataType.UUID, allowNull: false })
  declare sequenceId: string;

  @Column({ type: DataType.STRING(16), allowNull: false })
  declare status: string;

  @Column({ type: DataType.INTEGER, allowNull: false })
  declare totalContacts: number;

  @Column({ type: DataType.INTEGER, allowNull: false })
  declare successfulEnrollments: number;

  @Column({ type: DataType.INTEGER, allowNull: false })
  declare failedEnrollments: number;

  @Column({ type: DataType.INTEGER, allowNull: false })
  declare skippedDuplicates: number;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare createdAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare updatedAt: Date;
}
