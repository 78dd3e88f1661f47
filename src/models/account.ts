import { Column, DataType, Model, Table } from 'sequelize-typescript';

@Table({ tableName: 'accounts', underscored: true, timestamps: true })
export class Account extends Model {
  @Column({ type: DataType.UUID, primaryKey: true, defaultValue: DataType.UUIDV4 })
  declare id: string;

  @Column({ type: DataType.STRING(255), allowNull: false })
  declare name: string;

  // null means unlimited: the most runs in an active status across all the account's sequences.
  @Column({ type: DataType.INTEGER, allowNull: true })
  declare maxActiveRuns: number | null;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare createdAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare updatedAt: Date;
}
