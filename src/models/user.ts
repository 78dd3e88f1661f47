import { Column, DataType, ForeignKey, Model, Table } from 'sequelize-typescript';
import { Account } from './account';

// A person who signs in to the dashboard of one account (not an API key).
@Table({ tableName: 'users', underscored: true, timestamps: true })
export class User extends Model {
  @Column({ type: DataType.UUID, primaryKey: true, defaultValue: DataType.UUIDV4 })
  declare id: string;

  @ForeignKey(() => Account)
  @Column({ type: DataType.UUID, allowNull: false })
  declare accountId: string;

  @Column({ type: DataType.STRING(254), allowNull: false, unique: true })
  declare email: string;

  @Column({ type: DataType.STRING(255), allowNull: true })
  declare passwordHash: string | null;

  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: true })
  declare active: boolean;

  @Column({ type: DataType.DATE(3), allowNull: true })
  declare lastLoginAt: Date | null;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare createdAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare updatedAt: Date;
}
